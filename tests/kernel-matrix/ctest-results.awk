# ctest's log -> "STATUS NAME SECONDS" per test (STATUS PASS, FAIL or SKIP). Lines look like
# "  3/130 Test   #3: name ......   Passed    1.20 sec"; a retried test's last line counts.
/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: / {
  name = $4
  status[name] = ($0 ~ /Passed/) ? "PASS" : ($0 ~ /Skipped|Not Run/) ? "SKIP" : "FAIL"
  secs[name] = $(NF - 1)
}
END { for (n in status) print status[n], n, secs[n] }

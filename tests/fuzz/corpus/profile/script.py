#!/usr/bin/env -S cage --script
# /// cage
# run = ["python3"]
# [fs]
# rw = ["out"]
# ///
print(1)

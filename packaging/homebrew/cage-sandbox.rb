# Homebrew formula for cage. On macOS it installs the release's prebuilt binary for the Mac's
# architecture (cross-built with zig and checked for format in CI; a Mac user verifies it with
# `cage --self-test`); on Linux (Homebrew on Linux) it builds from the source tarball.
# The formula is named cage-sandbox because another sandbox project already uses "cage" in a tap;
# the command is still `cage`. packaging/release.sh --cross renders this template with the
# release's version and checksums.
class CageSandbox < Formula
  desc "Confine a program to the files and hosts it was granted"
  homepage "https://github.com/cage-sandbox/cage"
  version "@VERSION@"
  license "MIT"

  on_macos do
    on_arm do
      url "https://github.com/cage-sandbox/cage/releases/download/v@VERSION@/cage-@VERSION@-macos-arm64.tar.gz"
      sha256 "@SHA256_MACOS_ARM64@"
    end
    on_intel do
      url "https://github.com/cage-sandbox/cage/releases/download/v@VERSION@/cage-@VERSION@-macos-x86_64.tar.gz"
      sha256 "@SHA256_MACOS_X86_64@"
    end
  end

  on_linux do
    url "https://github.com/cage-sandbox/cage/releases/download/v@VERSION@/cage-@VERSION@.tar.gz"
    sha256 "@SHA256_SOURCE@"

    depends_on "cli11" => :build
    depends_on "cmake" => :build
    depends_on "ninja" => :build
    depends_on "pkg-config" => :build
    depends_on "tomlplusplus" => :build
    depends_on "libcap-ng"
    depends_on "libseccomp"
  end

  def install
    if OS.mac?
      # The tarball holds the binary, the man page, the completions and the profiles.
      bin.install "cage"
      man1.install "cage.1"
      bash_completion.install "completions/cage.bash" => "cage"
      zsh_completion.install "completions/_cage"
      fish_completion.install "completions/cage.fish"
      (share/"cage/profiles").install Dir["profiles/*.toml"]
    else
      # Homebrew's libraries are shared; link cage dynamically against them.
      system "cmake", "-S", ".", "-B", "build", "-G", "Ninja", "-DCAGE_STATIC=OFF", "-DCAGE_TESTS=OFF",
             *std_cmake_args
      system "cmake", "--build", "build"
      system "cmake", "--install", "build"
    end
  end

  def caveats
    on_macos do
      <<~EOS
        cage enforces its policy on macOS with /usr/bin/sandbox-exec. Check that the denials hold
        on this Mac with:
          cage --self-test
      EOS
    end
  end

  test do
    assert_match "cage #{version}", shell_output("#{bin}/cage --version")
    if OS.mac?
      assert_match "(deny default)", shell_output("#{bin}/cage --dry-run -- true")
      system bin/"cage", "--self-test"
    else
      assert_match "seccomp: default", shell_output("#{bin}/cage --dry-run -- true")
    end
  end
end

# Homebrew formula for cage (Linux only: Homebrew on Linux). The formula is named cage-sandbox
# because another sandbox project already uses "cage" in a tap; the command is still `cage`.
# packaging/release.sh renders this template with the release's version and source checksum.
class CageSandbox < Formula
  desc "Confine a program to the files and hosts it was granted"
  homepage "https://github.com/cage-sandbox/cage"
  url "https://github.com/cage-sandbox/cage/releases/download/v@VERSION@/cage-@VERSION@.tar.gz"
  version "@VERSION@"
  sha256 "@SHA256_SOURCE@"
  license "MIT"

  depends_on "cli11" => :build
  depends_on "cmake" => :build
  depends_on "ninja" => :build
  depends_on "pkg-config" => :build
  depends_on "tomlplusplus" => :build
  depends_on "libcap-ng"
  depends_on "libseccomp"
  depends_on :linux

  def install
    # Homebrew's libraries are shared; link cage dynamically against them.
    system "cmake", "-S", ".", "-B", "build", "-G", "Ninja", "-DCAGE_STATIC=OFF", "-DCAGE_TESTS=OFF",
           *std_cmake_args
    system "cmake", "--build", "build"
    system "cmake", "--install", "build"
  end

  test do
    assert_match "cage #{version}", shell_output("#{bin}/cage --version")
    assert_match "seccomp: default", shell_output("#{bin}/cage --dry-run -- true")
  end
end

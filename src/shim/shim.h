// `cage --spawn-shim --listen-fd 3 --channel-fd 4`: the in-namespace half of --net (see shim.cc).
#pragma once

namespace cage::shim {

// Entry point for the re-exec'd shim; main.cc dispatches to it before any option parsing.
int main(int argc, char** argv);

}  // namespace cage::shim

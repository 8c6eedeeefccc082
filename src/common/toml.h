// toml++ compiled once (toml_impl.cc defines TOML_IMPLEMENTATION); every consumer includes this header.
#pragma once
#ifndef TOML_HEADER_ONLY
#define TOML_HEADER_ONLY 0
#endif
#define TOML_ENABLE_FORMATTERS 1
#include <toml++/toml.h>

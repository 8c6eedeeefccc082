// The single translation unit that compiles toml++'s implementation (see common/toml.h).
#define TOML_IMPLEMENTATION
#include "common/toml.h"

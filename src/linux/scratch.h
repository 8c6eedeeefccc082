// --scratch NAME on the host (parent side): the directory is created 0700 beneath the caller's state
// directory without following any link, and refused when it or a directory on the way belongs to
// another user or is writable by group or others; --scratch-list and --scratch-remove act on the
// same directories. Proved by tests/integration/scratch.sh.
#pragma once
#include <string>

#include "common/error.h"
#include "linux/plan.h"

namespace cage::lx {

// Creates what is missing of plan.below beneath plan.base and checks every level that exists.
Status ensure_scratch(const ScratchPlan& plan);
// What --scratch-list prints (a line per directory, or one JSON object), for the root
// policy::scratch_root names.
Result<std::string> scratch_list(const std::string& root, bool json);
// Deletes root/NAME and everything in it; links inside are unlinked, never followed.
Result<std::string> scratch_remove(const std::string& root, const std::string& name);

// Removes the directory `name` in `parent` with everything beneath it; allocates nothing
// (landlock_only.cc: cage's init runs it in a forked copy of the supervisor).
void remove_tree_at(int parent, const char* name);

}  // namespace cage::lx

#!/usr/bin/env -S cage --script
// /// cage
// run = ["node"]
// ///

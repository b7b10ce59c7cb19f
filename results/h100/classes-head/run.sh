#!/usr/bin/env bash
# At this commit, after the OpenCL entry at 1024 cubed: the classes of the call's targets on
# both backends (results/h100/targets/run.sh "classes"). From the repository root after the
# prelude; into $OUT/targets.tgz:
#   bash results/h100/classes-head/run.sh
set -u
bash results/h100/targets/run.sh "classes"

#!/bin/bash
# Harness self-test: a guest script that fails.
echo "# this guest script fails on purpose"
exit 3

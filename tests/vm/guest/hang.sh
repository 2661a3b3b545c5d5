#!/bin/bash
# Harness self-test: a guest that never finishes.
echo "# hanging on purpose"
exec sleep 100000

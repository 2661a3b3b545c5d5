#!/bin/bash
# Boots, prepares the fabric (done by guest-init), reports success.
exit 0

#!/usr/bin/env bash
# Being written.
exit 77

#!/usr/bin/env bash
# usage: hot_page_library.sh LIBRARY
#
# The hot page (src/base/hot.h) in the shared library itself, as the
# dynamic linker maps it: section kcoll_hot starts a page and fits in it,
# and every variable a call handed straight to the host MPI reads lies on
# that page (test_hot_page.c checks the same in a program linked from the
# library's objects; the page's start depends on the link order, which
# only the library shows); and that the blocking entry points read no
# variable off it (a host's predefined handle included). Reads the section
# table (readelf), the symbols' addresses and sizes (nm) and the entry
# points' code (objdump).
set -euo pipefail
lib=$1
page=4096
line=$(readelf -SW "$lib" | sed -n 's/^.*] kcoll_hot  *//p')
if [ -z "$line" ]; then
  echo "FAIL: $lib has no section kcoll_hot"
  exit 1
fi
# PROGBITS address offset size ...
read -r _ addr _ size _ <<<"$line"
start=$((16#$addr)) len=$((16#$size))
fail=0
if [ $((start % page)) -ne 0 ]; then
  echo "FAIL: kcoll_hot starts at $addr, not at a page"
  fail=1
fi
if [ "$len" -gt "$page" ]; then
  echo "FAIL: kcoll_hot holds $len bytes, more than a page"
  fail=1
fi
for sym in kcoll_params_gen kcoll_npending kcoll_team_threads kcoll_shortcuts \
           kcoll_streak_fasts kcoll_host_fns; do
  entry=$(nm -S "$lib" | awk -v s="$sym" '$4 == s { print $1, $2 }')
  if [ -z "$entry" ]; then
    echo "FAIL: $sym not found in $lib"
    fail=1
    continue
  fi
  read -r a n <<<"$entry"
  a=$((16#$a)) n=$((16#$n))
  if [ "$a" -lt "$start" ] || [ $((a + n)) -gt $((start + page)) ]; then
    printf 'FAIL: %s at %#x (%d bytes) is not on the hot page at %#x\n' "$sym" "$a" "$n" "$start"
    fail=1
  fi
done
# What the blocking entry points read on their way to the host's function
# (objdump names the data each RIP-relative operand points at): the hot
# variables, and past them only what the rarer ways read (the v arrays of
# more than 4 ranks, a disabled kcoll's cells). A host's predefined handle
# (Open MPI's MPI_OP_NULL is the address of its object: read from the
# global offset table, a page of its own) or any other variable would be
# one more line, and from cold one more page, on every call.
allowed=" kcoll_params_gen kcoll_npending kcoll_team_threads kcoll_shortcuts kcoll_streak_fasts"
allowed+=" kcoll_host_fns kcoll_shortcut_rests kcoll_off_fast "
entries=0
dis=$(objdump -d --no-show-raw-insn "$lib")
for fn in Bcast Scatter Scatterv Gather Gatherv Allgather Allgatherv Alltoall Alltoallv Barrier \
          Reduce Allreduce Reduce_scatter_block Reduce_scatter; do
  body=$(awk -v f="<MPI_$fn>:" '$2 == f { on = 1; next } on && /^$/ { exit } on' <<<"$dis")
  if [ -z "$body" ]; then
    echo "FAIL: MPI_$fn not found in $lib"
    fail=1
    continue
  fi
  entries=$((entries + 1))
  for sym in $(sed -n 's/^.*# [0-9a-f]* <\([^>+]*\)[>+].*$/\1/p' <<<"$body" | sort -u); do
    if [[ "$allowed" != *" $sym "* ]]; then
      echo "FAIL: MPI_$fn reads $sym, which is not a hot variable"
      fail=1
    fi
  done
done
[ "$fail" -eq 0 ] && printf 'the %d blocking entry points read hot variables only\n' "$entries"
[ "$fail" -eq 0 ] && printf 'kcoll_hot: %d bytes at %#x, every hot variable on its page\n' "$len" "$start"
exit "$fail"

/* kcoll's per-user cache folder and what names a machine in it
 * (docs/tuning.md, "Quick calibration"): files kcoll measures or loads
 * once per machine (the quick calibration, mpi/quick.c; the topology's
 * facts, topo/topo.c) and reads again in every later job with the same
 * identity; and what a measurement kept there must know of the CPUs it
 * ran on. */
#ifndef KCOLL_BASE_CACHE_H
#define KCOLL_BASE_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The folder: KCOLL_CACHE_DIR, else $XDG_CACHE_HOME/kcoll, else
 * $HOME/.cache/kcoll. 0, or -1 when there is none to name. */
int kcoll_cache_folder(char *out, size_t len);

/* A 64-bit FNV-1a hash of len bytes, continuing from h (start:
 * KCOLL_FNV_START): a machine's identity in a cache file's name. */
#define KCOLL_FNV_START 0xcbf29ce484222325ull
uint64_t kcoll_fnv(uint64_t h, const void *data, size_t len);

/* The first "model name" of /proc/cpuinfo (or ""). */
void kcoll_cpu_model(char *out, size_t len);

/* This thread's CPU affinity as a mask of n 64-bit words (CPU i: bit
 * i % 64 of word i / 64). 0, or -1 (all words zero) where it cannot be
 * read. */
int kcoll_cpu_affinity(uint64_t *words, int n);
/* The CPUs in a mask of n words (as kcoll_cpu_affinity fills it). */
int kcoll_cpu_count(const uint64_t *words, int n);

/* How long this thread has waited, runnable, for a CPU since it began
 * (the kernel's schedstat run delay), in seconds; -1 where the kernel
 * does not say. A measurement that waited is a measurement of whatever
 * else ran on the CPU. */
double kcoll_run_delay(void);

/* Write path whole with write(f, arg) (0 on success) into a file of
 * another name in the same folder, then rename it to path, making the
 * folders on the way: a process that reads path meanwhile finds the old
 * file or the new one, never half of one. 0, or -1 with errno set. */
int kcoll_cache_write(const char *path, int (*write)(FILE *f, void *arg), void *arg);

#endif

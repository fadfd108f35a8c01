/* bind.c -- automatic binding (seeds 001-004) and weight tools. */
#include "sk.h"

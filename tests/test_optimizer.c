#include "harness.h"
int main(void) { return test_summary("optimizer"); }

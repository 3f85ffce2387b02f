#include <cstdio>
int main() { std::puts("pagedserve"); return 0; }

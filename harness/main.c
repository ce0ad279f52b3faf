/* main.c: placeholder until the command-line front end lands. */
#include <stdio.h>
int main(void) {
    fprintf(stderr, "harness: not built yet\n");
    return 2;
}

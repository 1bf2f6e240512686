/* Rescoring a task of many stored submissions, end to end through Redis. */
int main(void) { return 0; }

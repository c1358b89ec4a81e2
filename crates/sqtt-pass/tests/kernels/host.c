/* A host-side translation unit: the plugin must leave it untouched. */
int host_sum(const int *v, int n) {
    int s = 0;
    for (int i = 0; i < n; ++i) s += v[i] * 3;
    return s;
}

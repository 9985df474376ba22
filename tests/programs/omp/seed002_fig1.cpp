#define SIZE 1000

int main() {
    int *a = new int[SIZE];
    int *b = new int[SIZE];

    #pragma omp parallel for
    for (int i = 0; i < SIZE; i++)
        b[i] = i;

    #pragma omp target data           \
    map(from: a[0:SIZE])           \
    map(alloc: b[0:SIZE / 2])
    #pragma omp target parallel for \
    map(from: a[0:SIZE])           \
    map(to: b[0:SIZE / 2])
    for (int i = 0; i < SIZE; i++) {
        a[i] = b[i];
    }
    int r = a[1] == 1;
    delete[] a;
    delete[] b;
    return r ? 0 : 0;
}

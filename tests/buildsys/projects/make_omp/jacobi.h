void sweep(double *u, double *unew, int n, int steps);

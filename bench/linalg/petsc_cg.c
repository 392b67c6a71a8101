/* PETSc baseline for hetero's CG benchmark: KSPCG with no preconditioner (PCNONE) or PETSc's default one
 * (--pc default: block Jacobi with ILU(0) per rank on several ranks, ILU(0) on one) on the symmetric
 * Matrix Market matrices of data/matrices and on the 3-D seven-point Poisson matrix of an n^3 grid (--poisson3d n:
 * hetero::poisson_3d's rows, generated per rank), with the rows split over the ranks as hetero splits them
 * (contiguous blocks whose sizes differ by at most one, the first n % P ranks holding one more row).
 *
 * Modes:
 *   --fixed K   exactly K iterations (rtol = atol = 0, KSPConvergedSkip), the seed's mode with K = 1000;
 *   --rtol T    solve until ||r_k|| / ||b|| <= T (PETSc's default test on the unpreconditioned residual, as
 *               hetero's CG stops; x0 = 0, so ||r_0|| = ||b||).
 * Each matrix is solved once as warm-up, then `--rounds` times; each round's time is the slowest rank's
 * KSPSolve time (MPI_Wtime) divided by the iterations it took. x0 = 0; b = ones with --fixed (as
 * hetero's cg_1000), b = A * ones with --rtol.
 *
 * Output: one TSV line per matrix on stdout (no header; see petsc_cg.sh):
 *   matrix ranks rows nnz mode iterations median_us_per_iteration worst_us_per_iteration relative_residual
 * where nnz counts the stored entries of the full (mirrored) matrix and relative_residual is the true
 * ||b - A x|| / ||b|| after the last solve. The KSP converged reason goes to stderr.
 *
 * Build: mpicc.openmpi -O2 petsc_cg.c $(pkg-config --cflags --libs PETSc) -lz
 * Arguments not listed in usage() that start with '-' are passed to PETSc (e.g. -log_view, -ksp_view). */
#include <petscksp.h>
#include <zlib.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_MATRICES 64
#define LINE_LENGTH 4096
#define MESSAGE_LENGTH 1024

typedef struct {
  const char* matrices[MAX_MATRICES]; /* a path, or (poisson[m] > 0) the grid's extent as given */
  long poisson[MAX_MATRICES];         /* n of --poisson3d n; 0 for a file */
  int matrix_count;
  int fixed;           /* 1: fixed iterations, 0: solve to rtol */
  PetscInt iterations; /* fixed mode: iterations; rtol mode: the maximum */
  double rtol;
  int rounds;
  int default_pc; /* 1: PETSc's default preconditioner, 0: PCNONE */
} options;

/* The rows [*begin, *end) of rank `rank` of `ranks`: hetero::block_rows. */
static void block_rows(PetscInt rows, int ranks, int rank, PetscInt* begin, PetscInt* end) {
  const PetscInt base = rows / ranks, extra = rows % ranks, r = rank;
  *begin = r * base + (r < extra ? r : extra);
  *end = *begin + base + (r < extra ? 1 : 0);
}

static void usage(FILE* out, const char* program) {
  fprintf(out,
          "usage: %s (--matrix PATH | --poisson3d N) [...] [--fixed K | --rtol T] [--rounds R] [--max-it N]\n"
          "          [--pc none|default]\n"
          "  --matrix PATH  symmetric Matrix Market file (.mtx or gzip-compressed .mtx.gz); repeatable\n"
          "  --poisson3d N  the seven-point Laplacian of an N x N x N grid (hetero::poisson_3d), N from 2 to\n"
          "                 512; repeatable\n"
          "  --fixed K      run exactly K CG iterations (default: --fixed 1000)\n"
          "  --rtol T       solve until ||r|| / ||b|| <= T\n"
          "  --max-it N     iteration limit of --rtol (default 100000)\n"
          "  --rounds R     timed solves after one warm-up solve (default 7)\n"
          "  --pc P         none (PCNONE, the default) or default (PETSc's own choice for KSPCG)\n"
          "Other arguments starting with '-' are PETSc options.\n",
          program);
}

static int parse_int(const char* text, long low, long high, long* value) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < low || v > high) return 0;
  *value = v;
  return 1;
}

/* Parses our arguments into `o`; copies the others (PETSc's) to petsc_argv. Returns 0 with a message on error,
 * 2 for --help, 1 otherwise. */
static int parse_arguments(int argc, char** argv, options* o, int* petsc_argc, char** petsc_argv, char* message) {
  long v = 0;
  int have_fixed = 0, have_rtol = 0, have_max_it = 0;
  o->matrix_count = 0;
  o->fixed = 1;
  o->iterations = 1000;
  o->rtol = 0;
  o->rounds = 7;
  o->default_pc = 0;
  *petsc_argc = 0;
  petsc_argv[(*petsc_argc)++] = argv[0];
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const int has_value = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 2;
    if (strcmp(a, "--matrix") == 0 || strcmp(a, "--poisson3d") == 0 || strcmp(a, "--fixed") == 0 ||
        strcmp(a, "--rtol") == 0 || strcmp(a, "--rounds") == 0 || strcmp(a, "--max-it") == 0 ||
        strcmp(a, "--pc") == 0) {
      if (!has_value) {
        snprintf(message, MESSAGE_LENGTH, "%s needs a value", a);
        return 0;
      }
      const char* value = argv[++i];
      if (strcmp(a, "--pc") == 0) {
        if (strcmp(value, "none") != 0 && strcmp(value, "default") != 0) {
          snprintf(message, MESSAGE_LENGTH, "--pc %s: expected none or default", value);
          return 0;
        }
        o->default_pc = strcmp(value, "default") == 0;
      } else if (strcmp(a, "--matrix") == 0 || strcmp(a, "--poisson3d") == 0) {
        if (o->matrix_count == MAX_MATRICES) {
          snprintf(message, MESSAGE_LENGTH, "at most %d --matrix and --poisson3d arguments", MAX_MATRICES);
          return 0;
        }
        v = 0;
        /* From 2 (hetero's 1 x 1 x 1 grid is the 2-D matrix) to 512: one rank's 7 n^3 entries stay below 2^30,
         * so that `append` can double its capacity in a 32-bit PetscInt. */
        if (strcmp(a, "--poisson3d") == 0 && !parse_int(value, 2, 512, &v)) {
          snprintf(message, MESSAGE_LENGTH, "--poisson3d %s: expected a grid extent from 2 to 512", value);
          return 0;
        }
        o->poisson[o->matrix_count] = v;
        o->matrices[o->matrix_count++] = value;
      } else if (strcmp(a, "--fixed") == 0) {
        if (!parse_int(value, 1, INT_MAX, &v)) {
          snprintf(message, MESSAGE_LENGTH, "--fixed %s: expected a positive number of iterations", value);
          return 0;
        }
        have_fixed = 1;
        o->iterations = (PetscInt)v;
      } else if (strcmp(a, "--max-it") == 0) {
        if (!parse_int(value, 1, INT_MAX, &v)) {
          snprintf(message, MESSAGE_LENGTH, "--max-it %s: expected a positive number of iterations", value);
          return 0;
        }
        have_max_it = 1;
        o->iterations = (PetscInt)v;
      } else if (strcmp(a, "--rounds") == 0) {
        if (!parse_int(value, 1, 1000000, &v)) {
          snprintf(message, MESSAGE_LENGTH, "--rounds %s: expected a positive number", value);
          return 0;
        }
        o->rounds = (int)v;
      } else {
        char* end = NULL;
        errno = 0;
        o->rtol = strtod(value, &end);
        if (errno != 0 || end == value || *end != '\0' || !(o->rtol > 0 && o->rtol < 1)) {
          snprintf(message, MESSAGE_LENGTH, "--rtol %s: expected a number in (0, 1)", value);
          return 0;
        }
        have_rtol = 1;
      }
    } else if (a[0] == '-' && a[1] != '-') {
      petsc_argv[(*petsc_argc)++] = argv[i]; /* a PETSc option; its value (if any) follows as a non-option */
      if (has_value && argv[i + 1][0] != '-') petsc_argv[(*petsc_argc)++] = argv[++i];
    } else {
      snprintf(message, MESSAGE_LENGTH, "unknown argument '%s'", a);
      return 0;
    }
  }
  if (o->matrix_count == 0) {
    snprintf(message, MESSAGE_LENGTH, "no --matrix or --poisson3d given");
    return 0;
  }
  if (have_fixed && have_rtol) {
    snprintf(message, MESSAGE_LENGTH, "--fixed and --rtol exclude each other");
    return 0;
  }
  if (have_max_it && !have_rtol) {
    snprintf(message, MESSAGE_LENGTH, "--max-it only applies to --rtol");
    return 0;
  }
  if (have_rtol) {
    o->fixed = 0;
    if (!have_max_it) o->iterations = 100000;
  }
  petsc_argv[*petsc_argc] = NULL;
  return 1;
}

/* The entries of the rows [begin, end) of a symmetric matrix, lower and mirrored upper triangle. */
typedef struct {
  PetscInt rows; /* global rows (= columns) */
  long long file_entries;
  PetscInt count, capacity;
  PetscInt *row, *col; /* global indices */
  PetscScalar* value;
} entries;

static void free_entries(entries* e) {
  free(e->row);
  free(e->col);
  free(e->value);
  memset(e, 0, sizeof(*e));
}

static int append(entries* e, PetscInt i, PetscInt j, double v, char* message) {
  if (e->count == e->capacity) {
    const PetscInt capacity = e->capacity ? 2 * e->capacity : 1024;
    PetscInt* row = realloc(e->row, (size_t)capacity * sizeof(*row));
    if (row) e->row = row;
    PetscInt* col = realloc(e->col, (size_t)capacity * sizeof(*col));
    if (col) e->col = col;
    PetscScalar* value = realloc(e->value, (size_t)capacity * sizeof(*value));
    if (value) e->value = value;
    if (!row || !col || !value) {
      snprintf(message, MESSAGE_LENGTH, "out of memory after %lld entries", (long long)e->count);
      return 0;
    }
    e->capacity = capacity;
  }
  e->row[e->count] = i;
  e->col[e->count] = j;
  e->value[e->count] = v;
  ++e->count;
  return 1;
}

/* Reads the next line that is not a comment; 0 at the end of the file. Sets *too_long on a line too long. */
static int next_line(gzFile f, char* line, int* too_long) {
  *too_long = 0;
  while (gzgets(f, line, LINE_LENGTH)) {
    const size_t length = strlen(line);
    if (length == LINE_LENGTH - 1 && line[length - 1] != '\n' && !gzeof(f)) {
      *too_long = 1;
      return 1;
    }
    if (line[0] == '%') continue;
    const char* p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') ++p;
    if (*p == '\0') continue; /* blank line */
    return 1;
  }
  return 0;
}

/* Reads the Matrix Market file `path` (gzip-compressed or plain: gzopen reads both) and keeps the entries of the
 * rows that rank `rank` of `ranks` owns. Returns 0 with a message on error. */
static int read_matrix(const char* path, int ranks, int rank, entries* e, char* message) {
  char line[LINE_LENGTH], object[64], format[64], field[64], symmetry[64];
  int too_long = 0, ok = 0;
  memset(e, 0, sizeof(*e));
  gzFile f = gzopen(path, "rb");
  if (!f) {
    snprintf(message, MESSAGE_LENGTH, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    return 0;
  }
  if (!gzgets(f, line, LINE_LENGTH) || strncmp(line, "%%MatrixMarket", 14) != 0 ||
      sscanf(line + 14, "%63s %63s %63s %63s", object, format, field, symmetry) != 4) {
    snprintf(message, MESSAGE_LENGTH, "%s: not a Matrix Market file (no '%%%%MatrixMarket' header line)", path);
    goto done;
  }
  if (strcasecmp(object, "matrix") != 0 || strcasecmp(format, "coordinate") != 0) {
    snprintf(message, MESSAGE_LENGTH, "%s: '%s %s' is not supported; expected 'matrix coordinate'", path, object,
             format);
    goto done;
  }
  const int pattern = strcasecmp(field, "pattern") == 0;
  if (!pattern && strcasecmp(field, "real") != 0 && strcasecmp(field, "integer") != 0) {
    snprintf(message, MESSAGE_LENGTH, "%s: field '%s' is not supported; expected real, integer or pattern", path,
             field);
    goto done;
  }
  if (strcasecmp(symmetry, "symmetric") != 0) {
    snprintf(message, MESSAGE_LENGTH, "%s: the header says '%s'; CG needs a 'symmetric' matrix", path, symmetry);
    goto done;
  }
  long long m = 0, n = 0, nnz = 0;
  if (!next_line(f, line, &too_long) || too_long || sscanf(line, "%lld %lld %lld", &m, &n, &nnz) != 3) {
    snprintf(message, MESSAGE_LENGTH, "%s: missing or malformed size line 'rows columns entries'", path);
    goto done;
  }
  if (m != n) {
    snprintf(message, MESSAGE_LENGTH, "%s: the matrix is %lld x %lld; CG needs a square matrix", path, m, n);
    goto done;
  }
  if (m <= 0 || m > INT_MAX || nnz < 0) {
    snprintf(message, MESSAGE_LENGTH, "%s: unsupported size %lld x %lld with %lld entries", path, m, n, nnz);
    goto done;
  }
  e->rows = (PetscInt)m;
  e->file_entries = nnz;
  PetscInt begin = 0, end = 0;
  block_rows(e->rows, ranks, rank, &begin, &end);
  for (long long k = 0; k < nnz; ++k) {
    long long i = 0, j = 0;
    double v = 1.0;
    const int fields = pattern ? 2 : 3;
    if (!next_line(f, line, &too_long)) {
      snprintf(message, MESSAGE_LENGTH, "%s: the file ends after %lld of %lld entries", path, k, nnz);
      goto done;
    }
    if (too_long ||
        (pattern ? sscanf(line, "%lld %lld", &i, &j) : sscanf(line, "%lld %lld %lf", &i, &j, &v)) != fields) {
      snprintf(message, MESSAGE_LENGTH, "%s: entry %lld is malformed: %.80s", path, k + 1, line);
      goto done;
    }
    if (i < 1 || i > m || j < 1 || j > n) {
      snprintf(message, MESSAGE_LENGTH, "%s: entry %lld (%lld, %lld) is outside the %lld x %lld matrix", path,
               k + 1, i, j, m, n);
      goto done;
    }
    if (i < j) {
      snprintf(message, MESSAGE_LENGTH,
               "%s: entry %lld (%lld, %lld) is above the diagonal; a symmetric file stores the lower triangle",
               path, k + 1, i, j);
      goto done;
    }
    const PetscInt r = (PetscInt)(i - 1), c = (PetscInt)(j - 1);
    if (r >= begin && r < end && !append(e, r, c, v, message)) goto done;
    if (r != c && c >= begin && c < end && !append(e, c, r, v, message)) goto done; /* the mirrored entry */
  }
  ok = 1;
done:
  gzclose(f);
  if (!ok) free_entries(e);
  return ok;
}

/* The rows of the seven-point Laplacian of an n x n x n grid (row x + n (y + n z): diagonal 6, -1 for each
 * neighbour, as hetero::poisson_3d) that rank `rank` of `ranks` owns. Returns 0 with a message on error. */
static int make_poisson(long n, int ranks, int rank, entries* e, char* message) {
  memset(e, 0, sizeof(*e));
  e->rows = (PetscInt)(n * n * n);
  e->file_entries = n * n * n + 3 * (n - 1) * n * n; /* the lower triangle, as a symmetric file would store */
  PetscInt begin = 0, end = 0;
  block_rows(e->rows, ranks, rank, &begin, &end);
  const long offsets[3] = {1, n, n * n};
  for (PetscInt row = begin; row < end; ++row) {
    const long at[3] = {row % n, (row / n) % n, row / (n * n)};
    if (!append(e, row, row, 6.0, message)) goto failed;
    for (int d = 0; d < 3; ++d) {
      if (at[d] > 0 && !append(e, row, (PetscInt)(row - offsets[d]), -1.0, message)) goto failed;
      if (at[d] + 1 < n && !append(e, row, (PetscInt)(row + offsets[d]), -1.0, message)) goto failed;
    }
  }
  return 1;
failed:
  free_entries(e);
  return 0;
}

/* The MATMPIAIJ matrix of `e` with hetero's row blocks; local columns = local rows: vectors split the same way. */
static PetscErrorCode build_matrix(const entries* e, Mat* A) {
  PetscMPIInt ranks, rank;
  PetscInt begin, end, *d_nnz, *o_nnz, *start, *cols;
  PetscScalar* values;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &ranks));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  block_rows(e->rows, ranks, rank, &begin, &end);
  const PetscInt local = end - begin;
  PetscCall(PetscCalloc3(local + 1, &d_nnz, local + 1, &o_nnz, local + 1, &start));
  /* Count the entries of each local row in the diagonal block (columns [begin, end)) and outside it. */
  for (PetscInt k = 0; k < e->count; ++k) {
    const PetscInt r = e->row[k] - begin, c = e->col[k];
    if (c >= begin && c < end)
      ++d_nnz[r];
    else
      ++o_nnz[r];
  }
  /* Sort the entries by row (counting sort) so each row goes to PETSc in one MatSetValues call. */
  for (PetscInt r = 0; r < local; ++r) start[r + 1] = start[r] + d_nnz[r] + o_nnz[r];
  PetscCall(PetscMalloc2(e->count + 1, &cols, e->count + 1, &values));
  {
    PetscInt* next;
    PetscCall(PetscMalloc1(local + 1, &next));
    PetscCall(PetscArraycpy(next, start, local + 1));
    for (PetscInt k = 0; k < e->count; ++k) {
      const PetscInt at = next[e->row[k] - begin]++;
      cols[at] = e->col[k];
      values[at] = e->value[k];
    }
    PetscCall(PetscFree(next));
  }
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, local, local, e->rows, e->rows));
  PetscCall(MatSetType(*A, MATMPIAIJ));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, d_nnz, 0, o_nnz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (PetscInt r = 0; r < local; ++r) {
    const PetscInt global_row = begin + r;
    /* ADD_VALUES: a repeated entry of the file adds up rather than replacing the earlier one. */
    PetscCall(
        MatSetValues(*A, 1, &global_row, start[r + 1] - start[r], cols + start[r], values + start[r], ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(cols, values));
  PetscCall(PetscFree3(d_nnz, o_nnz, start));
  PetscFunctionReturn(0);
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* "bcsstk14" of ".../bcsstk14.mtx.gz". */
static void matrix_name(const char* path, char* name, size_t size) {
  const char* slash = strrchr(path, '/');
  snprintf(name, size, "%s", slash ? slash + 1 : path);
  const char* suffixes[] = {".mtx.gz", ".mtx", ".gz"};
  for (size_t s = 0; s < sizeof(suffixes) / sizeof(suffixes[0]); ++s) {
    const size_t length = strlen(name), suffix = strlen(suffixes[s]);
    if (length > suffix && strcmp(name + length - suffix, suffixes[s]) == 0) {
      name[length - suffix] = '\0';
      break;
    }
  }
}

/* Solves with the matrix `name` of `e` as `o` says and prints its TSV line (rank 0). Sets *mismatch if a
 * fixed-iteration solve stopped early for another reason than an exact (zero) residual. */
static PetscErrorCode run(const char* name, const entries* e, const options* o, int* mismatch) {
  Mat A;
  Vec x_star, b, x, r;
  KSP ksp;
  PC pc;
  MatInfo info;
  PetscMPIInt ranks, rank;
  PetscInt iterations = 0;
  KSPConvergedReason reason;
  PetscReal b_norm, r_norm;
  double* per_iteration;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &ranks));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(build_matrix(e, &A));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &x_star));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(x_star, 1.0));
  if (o->fixed) {
    /* b = ones, as hetero's cg_1000: with b = A * ones the residual of gr_30_30 reaches 0 in 720
     * iterations and KSPCG stops there (CONVERGED_ATOL), short of the fixed count. */
    PetscCall(VecSet(b, 1.0));
  } else {
    PetscCall(MatMult(A, x_star, b)); /* b = A * ones */
  }

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  if (!o->default_pc) PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE)); /* x0 = 0 */
  if (o->fixed) {
    PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_MAX_REAL, o->iterations));
    PetscCall(KSPSetConvergenceTest(ksp, KSPConvergedSkip, NULL, NULL));
  } else {
    PetscCall(KSPSetTolerances(ksp, o->rtol, 0.0, PETSC_DEFAULT, o->iterations));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  }
  PetscCall(KSPSetFromOptions(ksp)); /* -ksp_* options of the command line, if any */
  PetscCall(KSPSetUp(ksp));

  PetscCall(KSPSolve(ksp, b, x)); /* warm-up */
  PetscCall(PetscMalloc1(o->rounds, &per_iteration));
  for (int round = 0; round < o->rounds; ++round) {
    double seconds, slowest;
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    const double start = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    seconds = MPI_Wtime() - start;
    PetscCallMPI(MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
    PetscCall(KSPGetIterationNumber(ksp, &iterations));
    per_iteration[round] = slowest / (double)(iterations > 0 ? iterations : 1);
  }
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  qsort(per_iteration, (size_t)o->rounds, sizeof(double), compare_doubles);
  const int half = o->rounds / 2;
  const double median =
      o->rounds % 2 ? per_iteration[half] : 0.5 * (per_iteration[half - 1] + per_iteration[half]);
  const double worst = per_iteration[o->rounds - 1];

  /* The true residual of the last solve. */
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &r_norm));
  PetscCall(VecNorm(b, NORM_2, &b_norm));

  char mode[128];
  PCType pc_type = NULL;
  PetscCall(PCGetType(pc, &pc_type));
  if (o->fixed)
    snprintf(mode, sizeof(mode), "fixed");
  else
    snprintf(mode, sizeof(mode), "rtol=%g,pc=%s", o->rtol, o->default_pc ? "default" : "none");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "%s\t%d\t%" PetscInt_FMT "\t%.0f\t%s\t%" PetscInt_FMT "\t%.3f\t%.3f\t%.3e\n", name,
                        (int)ranks, e->rows, (double)info.nz_used, mode, iterations, median * 1e6, worst * 1e6,
                        (double)(r_norm / b_norm)));
  PetscCall(PetscFPrintf(PETSC_COMM_WORLD, stderr,
                         "petsc_cg: %s, %d rank(s), %s (PC %s): %s after %" PetscInt_FMT " iterations\n", name,
                         (int)ranks, mode, pc_type ? pc_type : "?", KSPConvergedReasons[reason], iterations));
  if (o->fixed && iterations != o->iterations && reason == KSP_CONVERGED_ATOL) {
    /* KSPCG stops when the residual norm is exactly 0, whatever the convergence test: the
     * solve is exact in floating point (gr_30_30 after ~720 iterations). The time per iteration
     * is over the iterations done. */
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, stderr,
                           "petsc_cg: %s: residual exactly 0 after %" PetscInt_FMT " of %" PetscInt_FMT
                           " fixed iterations; timed per iteration over those\n",
                           name, iterations, o->iterations));
  } else if (o->fixed && iterations != o->iterations) {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, stderr,
                           "petsc_cg: %s: stopped after %" PetscInt_FMT " of %" PetscInt_FMT " fixed iterations\n",
                           name, iterations, o->iterations));
    *mismatch = 1;
  }
  PetscCall(PetscFree(per_iteration));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x_star));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char** argv) {
  options o;
  char message[MESSAGE_LENGTH] = "";
  int petsc_argc = 0, status = 0, mismatch = 0;
  char** petsc_argv = calloc((size_t)argc + 1, sizeof(char*));
  if (!petsc_argv) return 1;
  const int parsed = parse_arguments(argc, argv, &o, &petsc_argc, petsc_argv, message);
  PetscCall(PetscInitialize(&petsc_argc, &petsc_argv, NULL, NULL));
  PetscMPIInt ranks, rank;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &ranks));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (parsed != 1) {
    if (rank == 0) {
      if (parsed == 0) fprintf(stderr, "petsc_cg: %s\n", message);
      usage(parsed == 0 ? stderr : stdout, argv[0]);
    }
    status = parsed == 0 ? 2 : 0;
  }
  for (int m = 0; status == 0 && m < o.matrix_count; ++m) {
    entries e;
    char name[256];
    if (o.poisson[m] > 0)
      snprintf(name, sizeof(name), "poisson3d-%ld", o.poisson[m]);
    else
      matrix_name(o.matrices[m], name, sizeof(name));
    int ok = o.poisson[m] > 0 ? make_poisson(o.poisson[m], ranks, rank, &e, message)
                              : read_matrix(o.matrices[m], ranks, rank, &e, message),
        all_ok = 0;
    /* Every rank reads the file (or makes its rows); any rank's failure stops all of them. */
    PetscCallMPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
    if (!all_ok) {
      if (!ok && (rank == 0 || strstr(message, "out of memory")))
        fprintf(stderr, "petsc_cg: error: %s\n", message);
      free_entries(&e);
      status = 1;
      break;
    }
    PetscCall(run(name, &e, &o, &mismatch));
    free_entries(&e);
  }
  if (status == 0 && mismatch) status = 3;
  PetscCall(PetscFinalize());
  free(petsc_argv);
  return status;
}

/* Preloaded into `hearth ... --cpu LEVEL` (Linux x86-64): this process sees an older x86 CPU, so every
 * runtime takes the code path it takes on such a machine while the timing stays this machine's.
 *
 * CPUID faulting (arch_prctl ARCH_SET_CPUID, Linux 4.12+, where the CPU supports it: the
 * "cpuid_fault" flag) makes every CPUID instruction of the process trap. The SIGSEGV handler runs
 * the real CPUID with faulting briefly off, clears the feature bits the level lacks, writes the
 * result into the saved registers and resumes after the instruction. Any other fault goes to the
 * handler that was there before. Runtimes read CPUID once at start-up, so the cost is nil afterwards.
 *
 * HEARTH_CPU_MASK, the levels the runtimes dispatch on (each keeps what this CPU has of its set):
 *   sse42        SSE4.2 and POPCNT, no AVX at all (x86-64-v2: Atom and Celeron/Pentium N and J, Goldmont
 *                to Tremont, the NAS class)
 *   avx2         AVX2 and FMA only (Haswell to Comet Lake, Zen 1-3)
 *   avx2-vnni    AVX2 with AVX-VNNI (Alder Lake)
 *   avx512       AVX-512 F/CD/BW/DQ/VL (Skylake-X)
 *   avx512-vnni  the same with AVX512-VNNI (Cascade Lake)
 *   avx512-bf16  AVX-512 with VNNI, BF16, VBMI/VBMI2, IFMA, BITALG, VPOPCNTDQ; no AVX-VNNI (Zen 4)
 *   avx512-amx   everything but AMX-FP16 and later (Sapphire Rapids): a no-op where the CPU is one */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

/* Leaf 1 ECX */
#define AVX_1 (BIT(12) | BIT(28) | BIT(29)) /* FMA, AVX, F16C */
/* Leaf 7 subleaf 0 EBX */
#define AVX2_7 (BIT(3) | BIT(5) | BIT(8)) /* BMI1, AVX2, BMI2 */
#define AVX512_CORE (BIT(16) | BIT(17) | BIT(28) | BIT(30) | BIT(31)) /* F, DQ, CD, BW, VL */
#define AVX512_IFMA BIT(21)
#define AVX512_OLD (BIT(26) | BIT(27)) /* PF, ER (Xeon Phi) */
/* Leaf 7 subleaf 0 ECX */
#define AVX512_VBMI (BIT(1) | BIT(6)) /* VBMI, VBMI2 */
#define AVX512_VNNI BIT(11)
#define AVX512_ICL (BIT(12) | BIT(14)) /* BITALG, VPOPCNTDQ */
/* Leaf 7 subleaf 0 EDX */
#define AVX512_PHI (BIT(2) | BIT(3)) /* 4VNNIW, 4FMAPS */
#define AVX512_VP2INTERSECT BIT(8)
#define AMX (BIT(22) | BIT(24) | BIT(25)) /* AMX-BF16, AMX-TILE, AMX-INT8 */
#define AVX512_FP16 BIT(23)
/* Leaf 7 subleaf 1 EAX */
#define AVX_VNNI BIT(4)
#define AVX512_BF16 BIT(5)
#define AMX_FP16 BIT(21)
#define AVX_IFMA BIT(23)
/* Leaf 7 subleaf 1 EDX */
#define AVX_NEWER (BIT(4) | BIT(5) | BIT(10) | BIT(19)) /* AVX-VNNI-INT8, AVX-NE-CONVERT, AVX-VNNI-INT16, AVX10 */

struct level {
    const char *name;
    unsigned ebx, ecx, edx, eax1, edx1; /* the bits this level clears in leaf 7 (subleaves 0 and 1) */
    unsigned ecx_1;                     /* and in leaf 1 */
};

static const struct level levels[] = {
    {"sse42", AVX2_7 | AVX512_CORE | AVX512_IFMA | AVX512_OLD, AVX512_VBMI | AVX512_VNNI | AVX512_ICL,
     AVX512_PHI | AVX512_VP2INTERSECT | AMX | AVX512_FP16, AVX_VNNI | AVX512_BF16 | AMX_FP16 | AVX_IFMA, AVX_NEWER,
     AVX_1},
    {"avx2", AVX512_CORE | AVX512_IFMA | AVX512_OLD, AVX512_VBMI | AVX512_VNNI | AVX512_ICL,
     AVX512_PHI | AVX512_VP2INTERSECT | AMX | AVX512_FP16, AVX_VNNI | AVX512_BF16 | AMX_FP16 | AVX_IFMA, AVX_NEWER},
    {"avx2-vnni", AVX512_CORE | AVX512_IFMA | AVX512_OLD, AVX512_VBMI | AVX512_VNNI | AVX512_ICL,
     AVX512_PHI | AVX512_VP2INTERSECT | AMX | AVX512_FP16, AVX512_BF16 | AMX_FP16 | AVX_IFMA, AVX_NEWER},
    {"avx512", AVX512_IFMA | AVX512_OLD, AVX512_VBMI | AVX512_VNNI | AVX512_ICL,
     AVX512_PHI | AVX512_VP2INTERSECT | AMX | AVX512_FP16, AVX_VNNI | AVX512_BF16 | AMX_FP16 | AVX_IFMA, AVX_NEWER},
    {"avx512-vnni", AVX512_IFMA | AVX512_OLD, AVX512_VBMI | AVX512_ICL,
     AVX512_PHI | AVX512_VP2INTERSECT | AMX | AVX512_FP16, AVX_VNNI | AVX512_BF16 | AMX_FP16 | AVX_IFMA, AVX_NEWER},
    {"avx512-bf16", AVX512_OLD, 0, AVX512_PHI | AVX512_VP2INTERSECT | AMX | AVX512_FP16,
     AVX_VNNI | AMX_FP16 | AVX_IFMA, AVX_NEWER},
    {"avx512-amx", AVX512_OLD, 0, AVX512_PHI, AMX_FP16 | AVX_IFMA, AVX_NEWER},
};

static struct sigaction previous;
static const struct level *level;

static void on_segv(int sig, siginfo_t *info, void *context) {
    ucontext_t *uc = context;
    greg_t *r = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)r[REG_RIP];
    if (ip[0] == 0x0f && ip[1] == 0xa2) { /* CPUID */
        unsigned leaf = (unsigned)r[REG_RAX], sub = (unsigned)r[REG_RCX], a, b, c, d;
        syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
        __cpuid_count(leaf, sub, a, b, c, d);
        syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
        if (leaf == 7 && sub == 0) {
            b &= ~level->ebx;
            c &= ~level->ecx;
            d &= ~level->edx;
        } else if (leaf == 7 && sub == 1) {
            a &= ~level->eax1;
            d &= ~level->edx1;
        } else if (leaf == 1) {
            c &= ~level->ecx_1;
        }
        r[REG_RAX] = a;
        r[REG_RBX] = b;
        r[REG_RCX] = c;
        r[REG_RDX] = d;
        r[REG_RIP] += 2;
        return;
    }
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
    } else {
        /* A real fault: said (where, for a run that ends without a word otherwise: pytest's fault
         * handler is off under the mask), then the instruction runs again and the process ends as it would. */
        Dl_info where;
        char line[512];
        int n = dladdr(ip, &where) && where.dli_fname
            ? snprintf(line, sizeof line, "cpu_mask: a fault (signal %d, address %p) at %s+%#lx\n", sig,
                       info->si_addr, where.dli_fname, (unsigned long)((const char *)ip - (const char *)where.dli_fbase))
            : snprintf(line, sizeof line, "cpu_mask: a fault (signal %d, address %p) at %p\n", sig, info->si_addr,
                       (const void *)ip);
        if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
            /* (nothing more to do: the process ends next) */
        }
        signal(sig, SIG_DFL);
    }
}

__attribute__((constructor)) static void mask_cpu(void) {
    const char *mask = getenv("HEARTH_CPU_MASK");
    if (!mask || !*mask) return;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(mask, levels[i].name) == 0) level = &levels[i];
    if (!level) return; /* (the Python side checks the name before it preloads this) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
}

/* Preloaded into `hearth bench --cpu avx2` (Linux x86-64): this process sees a CPU without AVX-512,
 * AMX or BF16 (and, for "avx2", without AVX-VNNI), so every runtime takes the code path it takes on
 * such a machine while the timing stays this machine's.
 *
 * CPUID faulting (arch_prctl ARCH_SET_CPUID, Linux 4.12+, where the CPU supports it: the
 * "cpuid_fault" flag) makes every CPUID instruction of the process trap. The SIGSEGV handler runs
 * the real CPUID with faulting briefly off, clears the feature bits, writes the result into the
 * saved registers and resumes after the instruction. Any other fault goes to the handler that was
 * there before. Runtimes read CPUID once at start-up, so the cost is nil afterwards.
 *
 * HEARTH_CPU_MASK: "avx2" (no AVX-512, AMX, BF16, AVX-VNNI) or "avx2-vnni" (the same, AVX-VNNI kept). */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction previous;
static int keep_vnni;

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
            /* EBX: AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL */
            b &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
            /* ECX: AVX512 VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ */
            c &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
            /* EDX: AVX512 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512-FP16, AMX-TILE, AMX-INT8 */
            d &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
        } else if (leaf == 7 && sub == 1) {
            /* EAX: AVX-VNNI (kept for avx2-vnni), AVX512-BF16, AMX-FP16, AVX-IFMA */
            a &= ~((keep_vnni ? 0u : (1u << 4)) | (1u << 5) | (1u << 21) | (1u << 23));
            /* EDX: AVX-VNNI-INT8, AVX-NE-CONVERT, AVX-VNNI-INT16, AVX10 */
            d &= ~((1u << 4) | (1u << 5) | (1u << 10) | (1u << 19));
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
        signal(sig, SIG_DFL); /* a real fault: the instruction runs again and the process ends as it would */
    }
}

__attribute__((constructor)) static void mask_cpu(void) {
    const char *mask = getenv("HEARTH_CPU_MASK");
    if (!mask || !*mask) return;
    keep_vnni = strcmp(mask, "avx2-vnni") == 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
}

/*
 * libucs_protosel.so.0: protosel as a UCS plugin of UCX >= 1.22, which
 * loads libucs_<name>.so.0 from the directories of UCX_PLUGIN_PATH (and its
 * own module directory) in libucs's constructor, RTLD_GLOBAL, and calls its
 * ucs_module_global_init(). Like libprotosel_ucx.so it depends on libc
 * alone and does nothing but hook two UCP entry points; the first call of
 * either loads the part that works (loader.h).
 *
 * A library opened after the application's libucp cannot interpose on it:
 * the application's references to ucp_config_read() bind to the first
 * definition in the global scope, libucp's. So the init redirects the
 * entry points where their callers reach them, in every loaded object's
 * GOT (JUMP_SLOT and GLOB_DAT relocations naming them, libucp's own call
 * from ucp_init_version() included), as LD_PRELOAD would have bound them.
 * UCP's own functions are taken from libucp's handle, so the wrappers never
 * call themselves.
 */
#define _GNU_SOURCE  /* dladdr, RTLD_NOLOAD */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#  define PSEL_PLUGIN_R_JUMP_SLOT  R_X86_64_JUMP_SLOT
#  define PSEL_PLUGIN_R_GLOB_DAT   R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#  define PSEL_PLUGIN_R_JUMP_SLOT  R_AARCH64_JUMP_SLOT
#  define PSEL_PLUGIN_R_GLOB_DAT   R_AARCH64_GLOB_DAT
#endif

/* One entry point: its name and the wrapper put in its place */
typedef struct {
    const char *name;
    void       *wrapper;
} psel_plugin_hook_t;

static void *psel_plugin_libucp;  /* the application's libucp (RTLD_NOLOAD) */

static psel_plugin_hook_t psel_plugin_hooks[] = {
    {"ucp_config_read",  (void*)psel_loader_config_read},
    {"ucp_init_version", (void*)psel_loader_init_version}
};

static struct {
    uintptr_t self_base;  /* this library, never patched */
    unsigned  slots;      /* GOT slots redirected */
    unsigned  failed;     /* slots that could not be written */
} psel_plugin_patch;


/* UCP's own function: from the libucp found at init */
static void *psel_plugin_next(const char *name)
{
    return (psel_plugin_libucp == NULL) ? NULL :
           dlsym(psel_plugin_libucp, name);
}

const psel_loader_entry_t psel_loader_entry = {
    .name     = "libucs_protosel.so.0",
    .off_hint = "take its directory out of UCX_PLUGIN_PATH",
    .next     = psel_plugin_next
};

#ifdef PSEL_PLUGIN_R_JUMP_SLOT

/* A dynamic-section address: glibc relocates them in place, except in
 * read-only dynamic sections (the vdso), which hold offsets */
static uintptr_t psel_plugin_dyn_addr(const struct dl_phdr_info *info,
                                      ElfW(Addr) value)
{
    return (value < info->dlpi_addr) ? info->dlpi_addr + value : value;
}

/* Writes @a value into @a slot, making a RELRO page writable meanwhile */
static int psel_plugin_write(void **slot, void *value, uintptr_t relro_start,
                             uintptr_t relro_end)
{
    uintptr_t page = (uintptr_t)slot & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
    size_t len     = (uintptr_t)(slot + 1) - page;
    int relro      = ((uintptr_t)slot >= relro_start) &&
                     ((uintptr_t)slot < relro_end);

    if (relro && mprotect((void*)page, len, PROT_READ | PROT_WRITE)) {
        return -1;
    }
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    if (relro) {
        (void)mprotect((void*)page, len, PROT_READ);
    }
    return 0;
}

static void psel_plugin_patch_relocs(const struct dl_phdr_info *info,
                                     const ElfW(Rela) *rela, size_t size,
                                     const ElfW(Sym) *symtab,
                                     const char *strtab, uintptr_t relro_start,
                                     uintptr_t relro_end)
{
    size_t i, num = size / sizeof(*rela);
    unsigned long type;
    const char *name;
    void **slot;
    unsigned h;

    for (i = 0; i < num; ++i) {
        type = ELF64_R_TYPE(rela[i].r_info);
        if ((type != PSEL_PLUGIN_R_JUMP_SLOT) &&
            (type != PSEL_PLUGIN_R_GLOB_DAT)) {
            continue;
        }
        name = strtab + symtab[ELF64_R_SYM(rela[i].r_info)].st_name;
        for (h = 0; h < sizeof(psel_plugin_hooks) /
                        sizeof(psel_plugin_hooks[0]); ++h) {
            if (strcmp(name, psel_plugin_hooks[h].name)) {
                continue;
            }
            slot = (void**)(info->dlpi_addr + rela[i].r_offset);
            if (psel_plugin_write(slot, psel_plugin_hooks[h].wrapper,
                                  relro_start, relro_end)) {
                ++psel_plugin_patch.failed;
            } else {
                ++psel_plugin_patch.slots;
            }
        }
    }
}

/* dl_iterate_phdr() callback: redirects the hooked entry points in one
 * loaded object */
static int psel_plugin_patch_object(struct dl_phdr_info *info, size_t size,
                                    void *arg)
{
    uintptr_t relro_start = 0, relro_end = 0, jmprel = 0, rela = 0;
    size_t jmprel_size = 0, rela_size = 0;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    long pltrel = DT_RELA;
    unsigned i;

    (void)size;
    (void)arg;
    if (info->dlpi_addr == psel_plugin_patch.self_base) {
        return 0;
    }
    for (i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn)*)(info->dlpi_addr +
                                     info->dlpi_phdr[i].p_vaddr);
        } else if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            relro_start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            relro_end   = relro_start + info->dlpi_phdr[i].p_memsz;
        }
    }
    for (; (dyn != NULL) && (dyn->d_tag != DT_NULL); ++dyn) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym)*)psel_plugin_dyn_addr(info,
                                                            dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char*)psel_plugin_dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_JMPREL:
            jmprel = psel_plugin_dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jmprel_size = dyn->d_un.d_val;
            break;
        case DT_PLTREL:
            pltrel = dyn->d_un.d_val;
            break;
        case DT_RELA:
            rela = psel_plugin_dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_RELASZ:
            rela_size = dyn->d_un.d_val;
            break;
        }
    }
    if ((symtab == NULL) || (strtab == NULL)) {
        return 0;
    }
    if ((jmprel != 0) && (pltrel == DT_RELA)) {
        psel_plugin_patch_relocs(info, (const ElfW(Rela)*)jmprel, jmprel_size,
                                 symtab, strtab, relro_start, relro_end);
    }
    if (rela != 0) {
        psel_plugin_patch_relocs(info, (const ElfW(Rela)*)rela, rela_size,
                                 symtab, strtab, relro_start, relro_end);
    }
    return 0;
}

static int psel_plugin_redirect(void)
{
    Dl_info self;

    if (!dladdr((void*)psel_plugin_redirect, &self)) {
        psel_loader_warn(psel_loader_entry.name, "dladdr failed");
        return 0;
    }
    psel_plugin_patch.self_base = (uintptr_t)self.dli_fbase;
    dl_iterate_phdr(psel_plugin_patch_object, NULL);
    if (psel_plugin_patch.failed > 0) {
        psel_loader_warn(psel_loader_entry.name, "a GOT entry of a UCP entry "
                         "point could not be written; some callers run "
                         "stock UCP");
    }
    return 1;
}

#else

static int psel_plugin_redirect(void)
{
    psel_loader_warn(psel_loader_entry.name, "redirecting UCP's entry points "
                     "is implemented for x86_64 and aarch64 only");
    return 0;
}

#endif

/*
 * Runs in libucs's constructor: libuct's and libucp's constructors have
 * not run yet (no transport component, no UCP config table is registered),
 * so nothing of protosel can be computed here. Only: UCX_PSEL_ENABLE, the
 * application's libucp (mapped and relocated when the application links
 * it, or when libucp's dlopen() brought libucs in), its version, and the
 * redirection. Always succeeds: an error would only make libucs unload
 * this library with a debug message. (The name and signature are what
 * UCS_MODULE_INIT() of UCX's ucs/sys/module.h declares; that header is not
 * installed.)
 */
__attribute__((visibility("protected")))
ucs_status_t ucs_module_global_init(void);

ucs_status_t ucs_module_global_init(void)
{
    unsigned h;

    if (psel_loader_disabled()) {
        return UCS_OK;
    }
    psel_plugin_libucp = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (psel_plugin_libucp == NULL) {
        return UCS_OK;  /* a process of libucs or libuct alone */
    }
    for (h = 0; h < sizeof(psel_plugin_hooks) / sizeof(psel_plugin_hooks[0]);
         ++h) {
        if (psel_plugin_next(psel_plugin_hooks[h].name) == NULL) {
            psel_loader_warn(psel_loader_entry.name, "the loaded libucp has "
                             "no ucp_config_read or ucp_init_version");
            return UCS_OK;
        }
    }
    if (psel_loader_version_ok()) {
        psel_plugin_redirect();
    }
    return UCS_OK;
}

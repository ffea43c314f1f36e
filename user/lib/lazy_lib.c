// SPDX-License-Identifier: MIT
/* lazy_lib__open (include/lazy_lib.h): dlopen on first use. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include "lazy_lib.h"
#include "log.h"

/* One lock for every lazy library: taken once per library and run. */
static pthread_mutex_t lazy_lock = PTHREAD_MUTEX_INITIALIZER;

bool lazy_lib__open(struct lazy_lib *l)
{
	void *h;
	int state = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);

	if (state)
		return state > 0;
	pthread_mutex_lock(&lazy_lock);
	state = l->state;
	if (state)
		goto out;
	state = -1;
	h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pr_warn("cannot load %s (%s), which %s needs\n", l->soname, dlerror(), l->why);
		goto done;
	}
	for (unsigned int i = 0; i < l->n; i++) {
		l->fns[i] = dlsym(h, l->names[i]);
		if (!l->fns[i]) {
			pr_warn("%s has no %s, which %s needs\n", l->soname, l->names[i], l->why);
			for (unsigned int j = 0; j < i; j++)
				l->fns[j] = NULL;
			dlclose(h);
			goto done;
		}
	}
	state = 1;
done:
	__atomic_store_n(&l->state, state, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&lazy_lock);
	return state > 0;
}

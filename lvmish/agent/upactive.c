// SPDX-License-Identifier: GPL-2.0
/*
 * The files open on this node through the lfs filesystem, as the upcall
 * workers granted them (OPEN answered, no CLOSE yet): the kernel's shelf
 * list does not show them, and the renewal thread must fence one the
 * librarian no longer lists as active here, as it does for block devices
 * (renew.c). Guarded by one mutex: the workers and the renewal thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblfsnl.h"
#include "upserver.h"

struct upactive {
	struct upactive *next;
	uint8_t uuid[LFS_UUID_LEN];
	char name[LFSVOL_UP_NAME_MAX + 1];
	uint64_t granted;
	bool write;
	bool fenced; /* asked of the kernel already */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct upactive *head;

static struct upactive **find(const uint8_t *uuid)
{
	struct upactive **p;

	for (p = &head; *p; p = &(*p)->next)
		if (!memcmp((*p)->uuid, uuid, LFS_UUID_LEN))
			return p;
	return p;
}

void lfsvol_upactive_add(const char *name, const uint8_t *uuid, uint64_t granted, bool write)
{
	struct upactive **p, *a;

	pthread_mutex_lock(&mu);
	p = find(uuid);
	a = *p ? *p : calloc(1, sizeof(*a));
	if (a) {
		memcpy(a->uuid, uuid, LFS_UUID_LEN);
		snprintf(a->name, sizeof(a->name), "%s", name);
		a->granted = granted;
		a->fenced = false;
		a->write |= write;
		if (!*p)
			*p = a;
	}
	pthread_mutex_unlock(&mu);
}

bool lfsvol_upactive_remove(const uint8_t *uuid, bool *write)
{
	struct upactive **p, *a;

	pthread_mutex_lock(&mu);
	p = find(uuid);
	a = *p;
	if (a) {
		*p = a->next;
		*write = a->write;
	}
	pthread_mutex_unlock(&mu);
	free(a);
	return a;
}

bool lfsvol_upactive_name(const uint8_t *uuid, char *name, size_t len)
{
	struct upactive *a;

	pthread_mutex_lock(&mu);
	a = *find(uuid);
	if (a)
		snprintf(name, len, "%s", a->name);
	pthread_mutex_unlock(&mu);
	return a;
}

void lfsvol_upactive_rename(const uint8_t *uuid, const char *to)
{
	struct upactive *a;

	pthread_mutex_lock(&mu);
	a = *find(uuid);
	if (a)
		snprintf(a->name, sizeof(a->name), "%s", to);
	pthread_mutex_unlock(&mu);
}

/*
 * Does the reply list this activation? By UUID where the librarian gives
 * it (a rename of the open file, here or elsewhere, may be under way: its
 * name in the reply and here can differ), else by name.
 */
static bool listed(json_t *activations, const struct upactive *u)
{
	char text[37];
	size_t i;
	json_t *a;

	lfs_format_uuid(u->uuid, text);
	json_array_foreach(activations, i, a) {
		const char *id = json_string_value(json_object_get(a, "uuid"));

		if (id && *id ?
			    !strcmp(id, text) :
			    !strcmp(json_string_value(json_object_get(a, "name")) ?: "", u->name))
			return true;
	}
	return false;
}

void lfsvol_upactive_fence(json_t *activations, uint64_t sent,
			   void (*fence)(const char *name, const uint8_t *uuid, void *arg),
			   void *arg)
{
	char names[64][LFSVOL_UP_NAME_MAX + 1];
	uint8_t uuids[64][LFS_UUID_LEN];
	struct upactive *a;
	int n = 0;

	/* copies first: fencing waits for the kernel, not under the lock */
	pthread_mutex_lock(&mu);
	for (a = head; a && n < 64; a = a->next)
		if (!a->fenced &&
		    (!activations || (a->granted < sent && !listed(activations, a)))) {
			a->fenced = true;
			memcpy(uuids[n], a->uuid, LFS_UUID_LEN);
			snprintf(names[n++], sizeof(names[0]), "%s", a->name);
		}
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < n; i++)
		fence(names[i], uuids[i], arg);
}

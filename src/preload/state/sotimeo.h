/* SPDX-License-Identifier: MIT */
/*
 * sotimeo.h - the program's own SO_RCVTIMEO / SO_SNDTIMEO, in milliseconds.
 *
 * A blocking call the library replaces must still give up when the
 * kernel's would: connect with EINPROGRESS after SO_SNDTIMEO, read and
 * write with EAGAIN.  Thread-safe (one getsockopt).
 */
#ifndef RS_SOTIMEO_H
#define RS_SOTIMEO_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Returns fd's SO_SNDTIMEO (send true) or SO_RCVTIMEO in milliseconds,
 * rounded up so that the library never gives up before the kernel would;
 * 0 when none is set or the option cannot be read.
 */
int64_t rs_sotimeo_ms(int fd, bool send);

#endif /* RS_SOTIMEO_H */

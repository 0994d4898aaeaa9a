// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * codec.c - an example Module for svc.conf Streams: the XDR presentation
 * layer for one record type, built as codec.so (Documentation/svc.rst).
 * With the built-in framer and checksum Modules below it, it makes the
 * example Stream of the Service Configurator:
 *
 *	stream Codec {
 *		static   framer
 *		static   cksum
 *		dynamic  Xdr Module * /usr/lib/asx/services/codec.so:asx_codec_xdr()
 *	}
 *
 * An application puts arrays of struct asx_codec_rec (below) at the Stream
 * head; going down they are encoded in XDR, checksummed (RFC 1071) and
 * framed; coming up the frame is checked, the checksum verified and the
 * records decoded back.  The same Modules over a kernel Stream (asx.ko
 * loaded) put the framing and checksum in the kernel instead:
 *
 *	stream KCodec kernel "loop" {
 *		kernel   frame
 *		kernel   csum
 *		dynamic  Xdr Module * /usr/lib/asx/services/codec.so:asx_codec_xdr()
 *	}
 *
 * Parameters: none.  The record is an example; a program declares its own
 * with ASX_XDR_RECORD and registers a factory like this one.
 */
#include <stddef.h>
#include <stdint.h>

#include <asx/stream.h>
#include <asx/svc.h>
#include <asx/xdr.h>

#include "codec.h"

ASX_XDR_RECORD_STATIC(codec_rec, struct asx_codec_rec,
		      ASX_XDR_FIELD(struct asx_codec_rec, seq, ASX_XDR_UINT),
		      ASX_XDR_FIELD_BYTES(struct asx_codec_rec, data, len));

ASX_SVC_MODULE_FACTORY(asx_codec_xdr)(struct asx_module **out, const char *name)
{
	return asx_mod_xdr(out, name, &codec_rec, NULL);
}

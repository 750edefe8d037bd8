/** How many replicas the gateway's JetStream streams and buckets get when JETSTREAM_REPLICAS is not set. */

/** 3 on a cluster of three or more servers (as the connected server reports it), else 1. */
export function autoStreamReplicas(info: { cluster?: string | undefined; connect_urls?: string[] | undefined } | undefined): number {
  return info?.cluster !== undefined && (info.connect_urls?.length ?? 0) >= 3 ? 3 : 1;
}

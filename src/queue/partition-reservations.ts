/**
 * Bytes that the partitions decided in this process may grow to, reserved as each starts and given
 * back as it ends: the partition jobs it takes and the partitions its runs take over share one memory,
 * and a partition's thread holds little of it until its baseline has been replayed, so the resident
 * size alone would let a job in while a takeover is still growing. One ledger per process.
 */
export class PartitionReservations {
  private bytes = 0;

  get total(): number {
    return this.bytes;
  }

  /** Reserves `bytes`; the returned function gives them back (once, however often it is called). */
  reserve(bytes: number): () => void {
    this.bytes += bytes;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.bytes -= bytes;
    };
  }
}

export const processReservations = new PartitionReservations();

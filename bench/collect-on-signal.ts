// Preloaded (node --expose-gc --import) into a server whose idle connections are measured: on
// SIGUSR2 it runs full garbage collections, so that resident memory read afterwards holds what the
// process keeps, not the garbage its last requests left. Bench only; the services never load it.
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error('collect-on-signal needs node --expose-gc');
process.on('SIGUSR2', () => {
  // Twice: the first collection's finalizers may free more for the second.
  collect();
  collect();
});

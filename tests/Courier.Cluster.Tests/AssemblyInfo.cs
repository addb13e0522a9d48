// Each test class starts several server processes; run one class at a time, so a 2-core machine is
// not asked to run a dozen nodes at once (failure detectors then see pauses that are load, not faults).
[assembly: CollectionBehavior(DisableTestParallelization = true)]

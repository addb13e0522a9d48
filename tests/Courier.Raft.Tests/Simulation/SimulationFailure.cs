namespace Courier.Raft.Tests.Simulation;

/// <summary>An invariant broke: says which, at which step, and how to replay the run.</summary>
internal sealed class SimulationFailure(string message) : Exception(message);

using Courier.Raft.Tests.Simulation;
using Xunit;
using Xunit.Abstractions;

namespace Courier.Raft.Tests;

/// <summary>
/// The Raft core under deterministic simulation: seeded runs through every fault profile, the
/// invariants checked at every step. A failing seed prints how to replay it; add it to
/// <see cref="Simulation_replays_one_seed"/> so it stays a regression test.
/// </summary>
public sealed class SimulationTests(ITestOutputHelper output)
{
    /// <summary>Seeds per profile: 60 in the README test command (a few hundred runs in all); the long run sets COURIER_RAFT_SEEDS.</summary>
    private static readonly int SeedsPerProfile =
        int.TryParse(Environment.GetEnvironmentVariable("COURIER_RAFT_SEEDS"), out var seeds) && seeds > 0 ? seeds : 60;

    /// <summary>First seed (the long run can continue where an earlier one stopped).</summary>
    private static readonly int FirstSeed =
        int.TryParse(Environment.GetEnvironmentVariable("COURIER_RAFT_FIRST_SEED"), out var first) && first > 0 ? first : 1;

    public static TheoryData<string> Profiles() => new(FaultProfile.Hostile.Select(p => p.Name));

    [Theory]
    [MemberData(nameof(Profiles))]
    public void Seeded_runs_keep_every_invariant(string profile)
    {
        var faults = FaultProfile.Hostile.Single(p => p.Name == profile);
        long acknowledged = 0, steps = 0;
        var failures = new List<string>();
        for (var seed = FirstSeed; seed < FirstSeed + SeedsPerProfile && failures.Count < 5; seed++)
        {
            try
            {
                var sim = Simulation.Simulation.Run(seed, faults);
                acknowledged += sim.Acknowledged.Count;
                steps += sim.Steps;
            }
            catch (SimulationFailure failure)
            {
                failures.Add(failure.Message);
            }
        }
        output.WriteLine($"{profile}: {SeedsPerProfile} seeds from {FirstSeed}, {steps:N0} steps, {acknowledged:N0} commands committed");
        Assert.True(failures.Count == 0, string.Join("\n\n", failures));
        // The runs did work: most proposals got through despite the faults.
        Assert.True(acknowledged > SeedsPerProfile * 50, $"only {acknowledged} commands committed in {SeedsPerProfile} runs");
    }

    [Theory]
    [InlineData(1, "chaos")]
    [InlineData(15, "membership")]
    [InlineData(12, "chaos")]
    [InlineData(401, "slow-disk")]
    [InlineData(3000, "chaos")]
    [InlineData(5636, "chaos")]
    [InlineData(11, "bitrot")] // a damaged log that voted: committed entry lost (the repair floor, issue 35)
    public void Simulation_replays_one_seed(int seed, string profile)
    {
        var first = Simulation.Simulation.Run(seed, FaultProfile.Hostile.Single(p => p.Name == profile));
        var second = Simulation.Simulation.Run(seed, FaultProfile.Hostile.Single(p => p.Name == profile));
        // Deterministic: the same seed is the same run, step for step.
        Assert.Equal(first.Steps, second.Steps);
        Assert.Equal(first.Check.DecidedCommands(ulong.MaxValue), second.Check.DecidedCommands(ulong.MaxValue));
    }
}

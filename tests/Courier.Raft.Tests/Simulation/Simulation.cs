using System.Buffers.Binary;

namespace Courier.Raft.Tests.Simulation;

/// <summary>
/// Many Raft members in one process on a virtual clock, a seeded network (drops, delays that
/// reorder, duplicates, partitions) and seeded disks (a crash loses unsynced writes or tears them).
/// Everything random comes from one seed, so a run replays exactly. The Raft invariants are
/// checked as it goes (<see cref="Invariants"/>); a break throws <see cref="SimulationFailure"/>
/// naming the seed.
/// </summary>
internal sealed partial class Simulation
{
    public const int TickMs = 10; // virtual ms per Raft tick: election timeout 100-200 ms, heartbeat 10 ms

    private readonly PriorityQueue<Action, (long Time, long Seq)> _events = new();
    private readonly HashSet<(ulong From, ulong To)> _cut = [];
    private readonly Dictionary<ulong, (ulong Index, ulong Term)> _proposed = [];
    private readonly Queue<string> _trace = new();
    private long _seq;
    private ulong _nextCommand = 1;

    public Simulation(int seed, FaultProfile profile, int members = 5, int voters = 3, RaftOptions? options = null)
    {
        Seed = seed;
        Profile = profile;
        Random = new Random(seed);
        Options = options ?? new RaftOptions { ElectionTicks = 10, HeartbeatTicks = 1, MaxBytesPerMessage = 4096, MaxInflightMessages = 16 };
        Nodes = new SimNode[members];
        Check = new Invariants(this);
        var initial = Enumerable.Range(1, voters).Select(i => (ulong)i).ToArray();
        for (var i = 0; i < members; i++)
        {
            var node = new SimNode((ulong)(i + 1), new SimDisk());
            Nodes[i] = node;
            node.Raft = NewRaft(node.Id, null);
            node.Incarnation = 1;
            if (i < voters)
            {
                // A group's creation is durable before its members take part (seed 401, slow-disk:
                // a crash tore the bootstrap write and the member later led term 1 without it).
                node.Raft.Bootstrap(initial);
                var ready = node.Raft.GetReady();
                node.Disk.Write(ready);
                Complete(node, ready);
            }
            var id = node.Id;
            Schedule(Random.Next(TickMs) + 1, () => TickLoop(id));
        }
        foreach (var node in Nodes) Pump(node);
        if (profile != FaultProfile.Calm) ScheduleFaults();
    }

    public int Seed { get; }
    public FaultProfile Profile { get; }
    public Random Random { get; }
    public RaftOptions Options { get; }
    public SimNode[] Nodes { get; }
    public Invariants Check { get; }
    public long Now { get; private set; }
    public long Steps { get; private set; }

    /// <summary>Commands whose entry was committed (some member applied it): the client was told yes.</summary>
    public HashSet<ulong> Acknowledged { get; } = [];

    public SimNode Node(ulong id) => Nodes[id - 1];

    // Not HashCode.Combine: it is salted per process, and a seed must replay anywhere.
    private RaftNode NewRaft(ulong id, PersistedState? state) =>
        new(id, Options with { RandomSeed = unchecked(Seed * 1_000_003 + (int)id * 7_919 + (int)Steps) }, state);

    public void Schedule(long delayMs, Action action) => _events.Enqueue(action, (Now + Math.Max(0, delayMs), _seq++));

    /// <summary>Runs events up to <paramref name="ms"/> virtual milliseconds from now.</summary>
    public void RunFor(long ms)
    {
        var until = Now + ms;
        while (_events.TryPeek(out var action, out var at) && at.Time <= until)
        {
            _events.Dequeue();
            Now = at.Time;
            Steps++;
            action();
            Check.LogMatching();
        }
        Now = until;
    }

    /// <summary>Runs until <paramref name="done"/> holds (checked every 10 virtual ms) or <paramref name="maxMs"/> pass.</summary>
    public bool RunUntil(Func<bool> done, long maxMs = 5000)
    {
        for (long waited = 0; waited <= maxMs; waited += 10)
        {
            if (done()) return true;
            RunFor(10);
        }
        return done();
    }

    public void Trace(string line)
    {
        _trace.Enqueue($"{Now,7}ms #{Steps} {line}");
        if (_trace.Count > 60) _trace.Dequeue();
    }

    public SimulationFailure Fail(string what) =>
        new($"seed {Seed} profile {Profile} step {Steps} at {Now} ms: {what}\n" +
            $"replay: Simulation_replays_one_seed(seed: {Seed}, profile: \"{Profile}\")\n" +
            string.Join('\n', Nodes.Select(n => "  " + n)) + "\nlast events:\n  " + string.Join("\n  ", _trace));

    private void TickLoop(ulong id)
    {
        var node = Node(id);
        if (node.Raft is { } raft)
        {
            raft.Tick();
            AfterEvent(node);
        }
        Schedule(TickMs, () => TickLoop(id));
    }

    /// <summary>Puts a message on the simulated network.</summary>
    private void Send(RaftMessage m)
    {
        if (_cut.Contains((m.From, m.To))) return;
        if (Profile.Drop > 0 && Random.NextDouble() < Profile.Drop) return;
        var copies = Profile.Duplicate > 0 && Random.NextDouble() < Profile.Duplicate ? 2 : 1;
        for (var i = 0; i < copies; i++)
            Schedule(Random.Next(Profile.MinDelayMs, Profile.MaxDelayMs + 1), () => Deliver(m));
    }

    private void Deliver(RaftMessage m)
    {
        if (m.To == 0 || m.To > (ulong)Nodes.Length) return;
        var node = Node(m.To);
        if (node.Raft is not { } raft) return;
        if (_cut.Contains((m.From, m.To))) return; // a partition also catches what was already in flight
        raft.Step(m);
        AfterEvent(node);
    }

    /// <summary>After anything touched a member: check it, then let it do its I/O.</summary>
    public void AfterEvent(SimNode node)
    {
        Check.Observe(node);
        Pump(node);
    }

    /// <summary>The host loop of one member: Ready, early sends, write (on the simulated disk, synced later), sends, apply, Advance.</summary>
    private void Pump(SimNode node)
    {
        while (node.Raft is { } raft && node.Writing is null && raft.HasReady)
        {
            var ready = raft.GetReady();
            foreach (var m in ready.EarlyMessages) Send(m);
            if (ready.NothingToPersist)
            {
                Complete(node, ready);
                continue;
            }
            node.Writing = ready;
            var incarnation = node.Incarnation;
            Schedule(Random.Next(1, Profile.MaxSyncMs + 1), () =>
            {
                if (node.Incarnation != incarnation || !ReferenceEquals(node.Writing, ready)) return;
                node.Disk.Write(ready);
                if (node.Raft is { RepairFloor: 0 } && node.Disk.RepairFloor != 0) node.Disk.ClearRepairFloor(); // the entries that reached it are durable now
                Complete(node, ready);
                Pump(node);
            });
            return;
        }
    }

    private void Complete(SimNode node, Ready ready)
    {
        node.Writing = null;
        foreach (var m in ready.Messages) Send(m);
        if (ready.Snapshot is { } snapshot) Check.InstallSnapshot(node, snapshot);
        foreach (var entry in ready.CommittedEntries) Check.Apply(node, entry);
        node.Raft!.Advance(ready);
        Check.Observe(node);
        MaybeCompact(node);
    }

    private void MaybeCompact(SimNode node)
    {
        if (Profile.CompactAfterEntries <= 0 || node.Raft is not { } raft) return;
        if (raft.AppliedIndex < raft.FirstIndex + (ulong)Profile.CompactAfterEntries) return;
        var keep = (ulong)Random.Next(0, 8); // sometimes keep a few entries behind the snapshot
        var index = raft.AppliedIndex - Math.Min(keep, raft.AppliedIndex - raft.FirstIndex);
        node.Disk.Compact(raft.Compact(index, EncodeCommands(node.CommandsUpTo(index))));
    }

    public static byte[] EncodeCommands(List<ulong> commands)
    {
        var bytes = new byte[commands.Count * 8];
        for (var i = 0; i < commands.Count; i++) BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(i * 8), commands[i]);
        return bytes;
    }

    public static List<ulong> DecodeCommands(ReadOnlySpan<byte> data)
    {
        var commands = new List<ulong>(data.Length / 8);
        for (var i = 0; i + 8 <= data.Length; i += 8) commands.Add(BinaryPrimitives.ReadUInt64LittleEndian(data[i..]));
        return commands;
    }
}

using System.Buffers;
using Akka.Actor;
using Akka.Event;
using Courier.Raft;
using Courier.Storage.Raft;

namespace Courier.Actors.Raft;

/// <summary>
/// Hosts every Raft group member on this node (a multi-raft node): one timer ticks them all, each
/// member's <see cref="Ready"/> is written on the thread pool while its core keeps stepping (the
/// actor thread never waits for a disk), and every message for one peer that one handled actor
/// message produced leaves in one frame (<see cref="RaftCodec"/>), so a thousand idle groups cost at
/// most one frame per peer pair per tick (and one answer frame), not a thousand.
/// </summary>
/// <remarks>
/// A group's applier (its stream, or the meta state machine) receives <see cref="Protocol.Applied"/>
/// batches in log order on every member, and <see cref="Protocol.LeaderChanged"/> when this member
/// starts or stops leading. A proposer gets <see cref="Protocol.Committed"/> once its entry is
/// committed (on a quorum of disks) and applied here, or <see cref="Protocol.Rejected"/> when this
/// member does not lead, or <see cref="Protocol.Lost"/> when leadership changed before its entry
/// was committed (it may still be committed by the next leader: appliers see it then).
/// </remarks>
internal sealed class RaftHost : ReceiveActor, IWithTimers
{
    private const string TickTimer = "tick";

    private readonly RaftHostSettings _settings;
    private readonly IRaftTransport _transport;
    private readonly Dictionary<string, Group> _groups = new(StringComparer.Ordinal);
    private readonly Dictionary<ulong, List<(string, RaftMessage)>> _outbound = [];
    private readonly ILoggingAdapter _log = Context.GetLogger();
    private readonly HashSet<string> _campaignOnStart = new(StringComparer.Ordinal);

    public RaftHost(RaftHostSettings settings, IRaftTransport transport)
    {
        _settings = settings;
        _transport = transport;
        Receive<Protocol.StartGroup>(Start);
        Receive<Protocol.Propose>(Propose);
        Receive<Protocol.Frame>(Frame);
        Receive<Protocol.Tick>(_ =>
        {
            foreach (var group in _groups.Values)
            {
                if (group.Failed) continue;
                group.Raft.Tick();
                if (group.DesiredVoters is not null) ChangeMembership(group);
                Process(group);
            }
            Flush();
        });
        Receive<Saved>(OnSaved);
        Receive<Protocol.TransferLeadership>(m =>
        {
            if (_groups.TryGetValue(m.Group, out var group) && !group.Failed && group.Raft.TransferLeadership(m.To)) Process(group);
            Flush();
        });
        Receive<Protocol.Compact>(m =>
        {
            if (!_groups.TryGetValue(m.Group, out var group) || group.Failed) return;
            if (group.Saving) group.DeferredCompact = m; // the store is busy with a write: after it
            else CompactNow(group, m);
        });
        Receive<Protocol.GetStatus>(_ => Sender.Tell(_groups.Values.Where(g => !g.Failed).Select(g => (g.Name, g.Raft.GetStatus())).ToArray()));
        Receive<Protocol.GetGroupStatus>(m => Sender.Tell(GroupStatus(m.Group)));
        Receive<Protocol.Campaign>(m =>
        {
            if (_groups.TryGetValue(m.Group, out var group) && !group.Failed)
            {
                group.Raft.Campaign();
                Process(group);
            }
            else if (!_groups.ContainsKey(m.Group))
            {
                _campaignOnStart.Add(m.Group); // its StartGroup is still on its way
            }
            Flush();
        });
        Receive<Protocol.RemoveGroup>(Remove);
        Receive<Protocol.SetVoters>(m =>
        {
            if (_groups.TryGetValue(m.Group, out var group) && !group.Failed)
            {
                group.DesiredVoters = m.Voters;
                ChangeMembership(group);
                Flush();
            }
        });
    }

    public ITimerScheduler Timers { get; set; } = null!;

    public static Props Props(RaftHostSettings settings, IRaftTransport transport) =>
        Akka.Actor.Props.Create(() => new RaftHost(settings, transport));

    protected override void PreStart() => Timers.StartPeriodicTimer(TickTimer, Protocol.Tick.Instance, _settings.TickInterval);

    protected override void PostStop()
    {
        foreach (var group in _groups.Values)
        {
            foreach (var pending in group.Pending.Values) pending.ReplyTo.Tell(new Protocol.Lost(pending.Correlation, group.Name));
            if (!group.Saving) group.Store.Dispose(); // a write in flight still owns the store; its process is ending
        }
    }

    private void Start(Protocol.StartGroup m)
    {
        if (_groups.ContainsKey(m.Name))
        {
            Sender.Tell(new Protocol.GroupStarted(m.Name));
            return;
        }
        var store = RaftLogStore.Open(Path.Combine(_settings.Directory, m.Name), _settings.Encryption);
        var state = store.Load();
        if (state is not null && m.InitialSnapshot is not null)
        {
            // A group made for existing state (a stream whose num_replicas went up): files of an earlier attempt that never finished go.
            store.Dispose();
            Directory.Delete(Path.Combine(_settings.Directory, m.Name), recursive: true);
            store = RaftLogStore.Open(Path.Combine(_settings.Directory, m.Name), _settings.Encryption);
            state = null;
        }

        var options = _settings.Raft with { RandomSeed = Random.Shared.Next() };
        if (state is { RepairFloor: > 0 } damaged)
            _log.Warning("Raft group {0}: this member's log lost entries it held (damaged files); it neither votes nor campaigns until the leader brings it to index {1}", m.Name, damaged.RepairFloor);
        var raft = new RaftNode(_settings.NodeId, options, state);
        if (state is null && m.Bootstrap)
        {
            // The group's creation is durable before this member takes part (src/Raft/README.md).
            raft.Bootstrap(m.Voters);
            var ready = raft.GetReady();
            store.Save(ready);
            raft.Advance(ready);
            if (m.InitialSnapshot is { } initial)
            {
                // The applier's state so far is the group's start: durable before the member takes part.
                var snapshot = raft.Compact(raft.AppliedIndex, initial);
                store.SaveSnapshot(snapshot);
                state = new PersistedState(new HardState(raft.Term, raft.Vote, raft.CommitIndex), snapshot, []);
            }
        }
        var group = new Group(m.Name, raft, store, m.Applier);
        _groups[m.Name] = group;
        m.Applier.Tell(new Protocol.Recovered(m.Name, state?.Snapshot, raft.Configuration.Voters)); // before any Applied: where the applier's state starts
        if (m.Campaign || _campaignOnStart.Remove(m.Name)) raft.Campaign();
        Process(group);
        Flush();
        Sender.Tell(new Protocol.GroupStarted(m.Name));
    }

    private void Propose(Protocol.Propose m)
    {
        if (!_groups.TryGetValue(m.Group, out var group) || group.Failed)
        {
            Sender.Tell(new Protocol.Rejected(m.Correlation, m.Group, 0));
            return;
        }
        if (!group.Raft.Propose(m.Command, out var index, out var term))
        {
            Sender.Tell(new Protocol.Rejected(m.Correlation, m.Group, group.Raft.Leader));
            return;
        }
        group.Pending[index] = new Pending(term, Sender, m.Correlation);
        Process(group);
        Flush();
    }

    private void Frame(Protocol.Frame m)
    {
        List<(string Group, RaftMessage Message)> messages;
        try
        {
            messages = RaftCodec.Read(m.Bytes);
        }
        catch (InvalidDataException e)
        {
            _log.Warning("Dropped a malformed Raft frame: {0}", e.Message);
            return;
        }
        var now = System.Diagnostics.Stopwatch.GetTimestamp();
        foreach (var (name, message) in messages)
        {
            // A peer may speak of a group this node has not started (yet): Raft resends.
            if (!_groups.TryGetValue(name, out var group) || group.Failed) continue;
            group.LastHeard[message.From] = now;
            group.Raft.Step(message);
            Process(group);
        }
        Flush();
    }

    /// <summary>The host's cycle for one member: early sends, the write off this thread, then (on <see cref="Saved"/>) sends, apply, advance.</summary>
    private void Process(Group group)
    {
        NoticeLeadership(group);
        while (!group.Saving && group.Raft.HasReady)
        {
            var ready = group.Raft.GetReady();
            Enqueue(group.Name, ready.EarlyMessages);
            if (ready.NothingToPersist || !group.Store.NeedsWrite(ready))
            {
                Complete(group, ready);
                continue;
            }
            group.Saving = true;
            var self = Self;
            Task.Run(() => group.Store.Save(ready)).ContinueWith(
                t => self.Tell(new Saved(group, ready, t.Exception?.GetBaseException())),
                CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
    }

    /// <summary>
    /// At the leader, one step toward the voters its applier asked for: the first missing one added, else the
    /// first extra one removed (one change at a time; the core refuses another while one is pending, so the
    /// next tick tries again). The leader never removes itself: when it is not wanted it hands leadership to a
    /// wanted voter once the rest is done. The set is reached, the wish is dropped.
    /// </summary>
    private static void ChangeMembership(Group group)
    {
        var raft = group.Raft;
        if (raft.Role != RaftRole.Leader || group.DesiredVoters is not { } desired)
        {
            return;
        }

        var config = raft.Configuration;
        var missing = desired.FirstOrDefault(v => !config.IsVoter(v));
        if (missing != 0)
        {
            raft.ProposeConfChange(new ConfChange(ConfChangeKind.AddVoter, missing), out _);
            return;
        }

        var extra = config.Voters.Concat(config.Learners).FirstOrDefault(v => !desired.Contains(v) && v != raft.Id);
        if (extra != 0)
        {
            raft.ProposeConfChange(new ConfChange(ConfChangeKind.Remove, extra), out _);
            return;
        }

        if (!desired.Contains(raft.Id))
        {
            // The leader itself is to go: it hands leadership to a wanted voter, which is told the same wish by its applier and removes it.
            var successors = config.Voters.Where(desired.Contains).ToArray();
            if (successors.Length > 0 && raft.CommitIndex >= raft.LastIndex)
            {
                raft.TransferLeadership(successors[Random.Shared.Next(successors.Length)]);
            }

            return;
        }

        if (raft.CommitIndex >= raft.LastIndex)
        {
            group.DesiredVoters = null;
        }
    }

    private void OnSaved(Saved m)
    {
        var group = m.Group;
        if (group.Removed)
        {
            group.Store.Dispose(); // removed while this write was in flight: the write owned the store until now
            DeleteFiles(group);
            return;
        }

        if (m.Error is not null)
        {
            // A member that cannot write must not answer as if it had (etcd/raft panics here). It
            // leaves the group; the others carry on, and a restart recovers it from its files.
            _log.Error(m.Error, "Raft group {0}: write failed; this member stops", group.Name);
            group.Failed = true;
            foreach (var pending in group.Pending.Values) pending.ReplyTo.Tell(new Protocol.Lost(pending.Correlation, group.Name));
            group.Pending.Clear();
            return;
        }
        Complete(group, m.Ready);
        if (group.DeferredCompact is { } compact)
        {
            group.DeferredCompact = null;
            CompactNow(group, compact);
        }
        Process(group);
        Flush();
    }

    /// <summary>Ends this member of a group (its stream was deleted): pending proposers hear Lost; with <see cref="Protocol.RemoveGroup.DeleteFiles"/> its log goes too.</summary>
    private void Remove(Protocol.RemoveGroup m)
    {
        if (!_groups.Remove(m.Group, out var group))
        {
            Sender.Tell(new Protocol.GroupRemoved(m.Group));
            return;
        }
        foreach (var pending in group.Pending.Values) pending.ReplyTo.Tell(new Protocol.Lost(pending.Correlation, group.Name));
        group.Pending.Clear();
        group.Removed = true;
        group.DeleteFiles = m.DeleteFiles;
        if (!group.Saving)
        {
            group.Store.Dispose();
            DeleteFiles(group);
        }
        Sender.Tell(new Protocol.GroupRemoved(m.Group));
    }

    private void DeleteFiles(Group group)
    {
        if (!group.DeleteFiles) return;
        try
        {
            Directory.Delete(Path.Combine(_settings.Directory, group.Name), recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
        catch (IOException e)
        {
            _log.Warning("Raft group {0}: its files could not be removed: {1}", group.Name, e.Message);
        }
    }

    private Protocol.GroupStatus GroupStatus(string name)
    {
        if (!_groups.TryGetValue(name, out var group) || group.Failed) return new Protocol.GroupStatus(name, null, new Dictionary<ulong, TimeSpan>());
        var now = System.Diagnostics.Stopwatch.GetTimestamp();
        var heard = new Dictionary<ulong, TimeSpan>(group.LastHeard.Count);
        foreach (var (peer, at) in group.LastHeard) heard[peer] = System.Diagnostics.Stopwatch.GetElapsedTime(at, now);
        return new Protocol.GroupStatus(name, group.Raft.GetStatus(), heard);
    }

    private static void CompactNow(Group group, Protocol.Compact m)
    {
        if (m.Index <= group.Raft.FirstIndex - 1 || m.Index > group.Raft.AppliedIndex) return; // already compacted, or not applied yet
        group.Store.SaveSnapshot(group.Raft.Compact(m.Index, m.Data));
    }

    private void Complete(Group group, Ready ready)
    {
        group.Saving = false;
        Enqueue(group.Name, ready.Messages);
        if (ready.Snapshot is not null || ready.CommittedEntries.Length > 0)
            group.Applier.Tell(new Protocol.Applied(group.Name, ready.Snapshot, ready.CommittedEntries));
        foreach (var entry in ready.CommittedEntries)
        {
            if (!group.Pending.Remove(entry.Index, out var pending)) continue;
            pending.ReplyTo.Tell(pending.Term == entry.Term
                ? new Protocol.Committed(pending.Correlation, group.Name, entry.Index)
                : new Protocol.Lost(pending.Correlation, group.Name));
        }
        group.Raft.Advance(ready);
        if (group.Store.RepairFloor != 0 && group.Raft.RepairFloor == 0)
        {
            group.Store.ClearRepairFloor(); // the entries that reached the floor are durable (this Ready's write)
            _log.Info("Raft group {0}: this member's log is repaired (it votes again)", group.Name);
        }
        NoticeLeadership(group);
    }

    /// <summary>Tells the applier when this member starts or stops leading; a member that stops leading answers its pending proposers.</summary>
    private void NoticeLeadership(Group group)
    {
        var raft = group.Raft;
        var leading = raft.Role == RaftRole.Leader;
        if (leading == group.Leading && raft.Term == group.Term && raft.Leader == group.Leader) return;
        if (group.Leading && !leading)
        {
            foreach (var pending in group.Pending.Values) pending.ReplyTo.Tell(new Protocol.Lost(pending.Correlation, group.Name));
            group.Pending.Clear();
        }
        if (leading && !group.Leading) _log.Info("Raft group {0}: this member leads (term {1})", group.Name, raft.Term);
        group.Leading = leading;
        group.Term = raft.Term;
        group.Leader = raft.Leader;
        group.Applier.Tell(new Protocol.LeaderChanged(group.Name, raft.Leader, raft.Term, leading));
    }

    private void Enqueue(string group, RaftMessage[] messages)
    {
        foreach (var m in messages)
        {
            if (!_outbound.TryGetValue(m.To, out var list)) _outbound[m.To] = list = [];
            list.Add((group, m));
        }
    }

    /// <summary>One frame per peer for everything the handled message produced.</summary>
    private void Flush()
    {
        foreach (var (peer, messages) in _outbound)
        {
            if (messages.Count == 0) continue;
            var buffer = new ArrayBufferWriter<byte>(RaftCodec.Size(messages));
            RaftCodec.Write(buffer, messages);
            messages.Clear();
            _transport.Send(peer, buffer.WrittenMemory);
        }
    }

    private sealed class Group(string name, RaftNode raft, RaftLogStore store, IActorRef applier)
    {
        public string Name { get; } = name;
        public RaftNode Raft { get; } = raft;
        public RaftLogStore Store { get; } = store;
        public IActorRef Applier { get; } = applier;
        public Dictionary<ulong, Pending> Pending { get; } = [];
        public bool Saving { get; set; }
        public Protocol.Compact? DeferredCompact { get; set; }
        public bool Failed { get; set; }
        public bool Removed { get; set; }
        public bool DeleteFiles { get; set; }
        /// <summary>When each peer last spoke in this group (monotonic timestamps): STREAM.INFO's replica <c>active</c>.</summary>
        public Dictionary<ulong, long> LastHeard { get; } = [];
        public bool Leading { get; set; }
        /// <summary>The voters the applier asked for (<see cref="Protocol.SetVoters"/>), until reached.</summary>
        public ulong[]? DesiredVoters { get; set; }
        public ulong Term { get; set; }
        public ulong Leader { get; set; }
    }

    private readonly record struct Pending(ulong Term, IActorRef ReplyTo, long Correlation);

    private sealed record Saved(Group Group, Ready Ready, Exception? Error);

    /// <summary>What the host takes and answers.</summary>
    public static class Protocol
    {
        /// <summary>Join (or, with <paramref name="Bootstrap"/>, create) a group; answered with <see cref="GroupStarted"/>.</summary>
        /// <remarks>With <paramref name="InitialSnapshot"/> (and <paramref name="Bootstrap"/>), the group starts from the applier's present state: bootstrapped and compacted into that snapshot before it takes part.</remarks>
        public sealed record StartGroup(string Name, ulong[] Voters, bool Bootstrap, IActorRef Applier, bool Campaign = false, ReadOnlyMemory<byte>? InitialSnapshot = null);

        /// <summary>The voters this group should have: its leader (this member, or whichever leads later and is told again) adds and removes them one at a time.</summary>
        public sealed record SetVoters(string Group, ulong[] Voters);

        /// <summary>Campaign now rather than at the next election timeout (a new group's first leader).</summary>
        public sealed record Campaign(string Group);

        /// <summary>End this node's member of a group; answered with <see cref="GroupRemoved"/>.</summary>
        public sealed record RemoveGroup(string Group, bool DeleteFiles);

        public sealed record GroupRemoved(string Group);

        /// <summary>Asks for one group's <see cref="GroupStatus"/>.</summary>
        public sealed record GetGroupStatus(string Group);

        /// <summary>One member's status (null: not hosted here) and how long ago each peer last spoke in the group.</summary>
        public sealed record GroupStatus(string Group, RaftStatus? Status, IReadOnlyDictionary<ulong, TimeSpan> SinceHeard);

        public sealed record GroupStarted(string Name);

        /// <summary>
        /// To the applier when its member starts, before anything is applied: the member's last snapshot
        /// (its state up to the snapshot's index; the committed entries after it follow), or null when the
        /// member has none (every committed entry of the log follows); and the voters its own files name
        /// (empty for a member that has none yet).
        /// </summary>
        public sealed record Recovered(string Group, Snapshot? Snapshot, ulong[] Voters);

        /// <summary>One command (a batch of the applier's own operations) for the group's log.</summary>
        public sealed record Propose(string Group, ReadOnlyMemory<byte> Command, long Correlation);

        /// <summary>The command is committed and applied on this member at <paramref name="Index"/>.</summary>
        public sealed record Committed(long Correlation, string Group, ulong Index);

        /// <summary>This member does not lead; <paramref name="Leader"/> is the one it knows (0: none).</summary>
        public sealed record Rejected(long Correlation, string Group, ulong Leader);

        /// <summary>Leadership changed before the command committed: not acknowledged (it may still be committed later).</summary>
        public sealed record Lost(long Correlation, string Group);

        /// <summary>To the applier: committed entries (after the snapshot, if any, which replaces its state), in log order.</summary>
        public sealed record Applied(string Group, Snapshot? Snapshot, Entry[] Entries);

        /// <summary>To the applier: who leads now, and whether it is this member.</summary>
        public sealed record LeaderChanged(string Group, ulong Leader, ulong Term, bool IsSelf);

        public sealed record Frame(ReadOnlyMemory<byte> Bytes);

        public sealed record TransferLeadership(string Group, ulong To);

        /// <summary>The applier's state up to <paramref name="Index"/> (applied): the log before it can go.</summary>
        public sealed record Compact(string Group, ulong Index, ReadOnlyMemory<byte> Data);

        /// <summary>Answered with every group's (name, <see cref="RaftStatus"/>).</summary>
        public sealed record GetStatus
        {
            public static readonly GetStatus Instance = new();
        }

        public sealed record Tick
        {
            public static readonly Tick Instance = new();
        }
    }
}

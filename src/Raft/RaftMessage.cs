namespace Courier.Raft;

/// <summary>The messages members of one group exchange (Raft §5 and the dissertation's extensions).</summary>
public enum MessageType : byte
{
    /// <summary>Leader to follower: entries after (Index, LogTerm), and the leader's commit.</summary>
    Append = 1,
    /// <summary>Follower to leader: accepted up to Index, or rejected with RejectHint.</summary>
    AppendResponse = 2,
    /// <summary>Leader to follower: still here; Commit is min(follower's match, leader's commit).</summary>
    Heartbeat = 3,
    HeartbeatResponse = 4,
    /// <summary>Candidate to voter: vote for me in Term; my last entry is (Index, LogTerm).</summary>
    Vote = 5,
    VoteResponse = 6,
    /// <summary>Would you vote for me in Term (not yet taken)? Dissertation §9.6: a member that cannot win does not disturb the group.</summary>
    PreVote = 7,
    PreVoteResponse = 8,
    /// <summary>Leader to follower: the follower's next entry is compacted away; install this snapshot.</summary>
    Snapshot = 9,
    /// <summary>Leader to its chosen successor: campaign now, ignoring election timeout and leases (§3.10 leadership transfer).</summary>
    TimeoutNow = 10,
}

/// <summary>
/// One message between two members of a group. The host carries it (the route links, batched per
/// peer pair) and hands it to the recipient's <see cref="RaftNode.Step"/>; the core never sends.
/// </summary>
public sealed class RaftMessage
{
    public MessageType Type { get; init; }
    public ulong From { get; init; }
    public ulong To { get; init; }
    public ulong Term { get; init; }
    /// <summary>Append: term of the entry at <see cref="Index"/>; Vote/PreVote: term of the candidate's last entry.</summary>
    public ulong LogTerm { get; init; }
    /// <summary>Append: the index just before <see cref="Entries"/>; AppendResponse: the last index accepted (or the rejected one); Vote/PreVote: the candidate's last index.</summary>
    public ulong Index { get; init; }
    public Entry[] Entries { get; init; } = [];
    public ulong Commit { get; init; }
    public bool Reject { get; init; }
    /// <summary>AppendResponse when rejecting: the follower's best guess of where the logs agree.</summary>
    public ulong RejectHint { get; init; }
    /// <summary>Vote/PreVote sent after TimeoutNow: voters grant it even while they hear from a leader.</summary>
    public bool Transfer { get; init; }
    /// <summary>
    /// AppendResponse and HeartbeatResponse from a member repairing a damaged log (<see cref="RaftNode.RepairFloor"/>):
    /// it lost entries it had acknowledged, so the leader's match for it may be too high. A HeartbeatResponse then
    /// carries its last index in <see cref="Index"/>.
    /// </summary>
    public bool Repairing { get; init; }
    public Snapshot? Snapshot { get; init; }

    public override string ToString() =>
        $"{Type} {From}->{To} t{Term} i{Index} lt{LogTerm} c{Commit}" +
        (Entries.Length > 0 ? $" [{Entries[0].Index}..{Entries[^1].Index}]" : "") +
        (Reject ? $" reject hint {RejectHint}" : "") + (Snapshot is null ? "" : $" snap {Snapshot.Meta.Index}@{Snapshot.Meta.Term}");
}

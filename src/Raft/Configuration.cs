namespace Courier.Raft;

/// <summary>A group's membership: voters (counted for quorum) and learners (replicated to, never counted).</summary>
public sealed class Configuration
{
    public static readonly Configuration Empty = new([], []);

    public Configuration(ulong[] voters, ulong[] learners)
    {
        Voters = voters;
        Learners = learners;
    }

    public ulong[] Voters { get; }
    public ulong[] Learners { get; }

    /// <summary>Votes a decision needs: a majority of the voters.</summary>
    public int Quorum => Voters.Length / 2 + 1;

    public bool IsVoter(ulong node) => Array.IndexOf(Voters, node) >= 0;
    public bool IsLearner(ulong node) => Array.IndexOf(Learners, node) >= 0;
    public bool Contains(ulong node) => IsVoter(node) || IsLearner(node);

    /// <summary>This configuration with <paramref name="change"/> applied.</summary>
    public Configuration Apply(ConfChange change)
    {
        var voters = new List<ulong>(Voters);
        var learners = new List<ulong>(Learners);
        voters.Remove(change.Node);
        learners.Remove(change.Node);
        switch (change.Kind)
        {
            case ConfChangeKind.AddVoter: voters.Add(change.Node); break;
            case ConfChangeKind.AddLearner: learners.Add(change.Node); break;
        }
        voters.Sort();
        learners.Sort();
        return new Configuration([.. voters], [.. learners]);
    }

    public override string ToString() =>
        $"voters [{string.Join(' ', Voters)}]" + (Learners.Length > 0 ? $" learners [{string.Join(' ', Learners)}]" : "");
}

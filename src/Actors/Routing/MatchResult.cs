namespace Courier.Actors.Routing;

/// <summary>
/// The subscriptions a published subject reaches: plain ones, and queue groups of which one
/// member gets each message. Immutable and cached, so it is shared by all publishers.
/// </summary>
internal sealed class MatchResult
{
    public static readonly MatchResult Empty = new([], []);

    public MatchResult(Subscription[] plain, QueueGroup[] queues)
    {
        Plain = plain;
        Queues = queues;
    }

    public Subscription[] Plain { get; }

    public QueueGroup[] Queues { get; }

    public bool IsEmpty => Plain.Length == 0 && Queues.Length == 0;

    /// <summary>Whether this result holds exactly these plain subscriptions, in this order, and no queue groups.</summary>
    public bool Holds(List<Subscription> plain, List<Subscription> queued)
    {
        if (queued.Count != 0 || Queues.Length != 0 || plain.Count != Plain.Length)
        {
            return false;
        }

        for (var i = 0; i < Plain.Length; i++)
        {
            if (!ReferenceEquals(Plain[i], plain[i]))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Builds a result, grouping queue subscriptions by queue name.</summary>
    public static MatchResult Create(List<Subscription> plain, List<Subscription> queued)
    {
        if (plain.Count == 0 && queued.Count == 0)
        {
            return Empty;
        }

        QueueGroup[] groups = [];
        if (queued.Count > 0)
        {
            var byName = new Dictionary<string, List<Subscription>>(StringComparer.Ordinal);
            foreach (var sub in queued)
            {
                if (!byName.TryGetValue(sub.Queue!, out var members))
                {
                    byName[sub.Queue!] = members = [];
                }

                members.Add(sub);
            }

            groups = new QueueGroup[byName.Count];
            var i = 0;
            foreach (var (name, members) in byName)
            {
                groups[i++] = new QueueGroup(name, [.. members]);
            }
        }

        return new MatchResult([.. plain], groups);
    }
}

/// <summary>The members of one queue group that match a subject.</summary>
internal sealed record QueueGroup(string Name, Subscription[] Members)
{
    /// <summary>The name in UTF-8, as RMSG lines carry it.</summary>
    public byte[] NameUtf8 { get; } = System.Text.Encoding.UTF8.GetBytes(Name);
}

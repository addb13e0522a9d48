using System.Collections.Concurrent;
using System.Text;
using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

/// <summary>
/// A client's publish and subscribe permissions, as nats-server: a subject must match an allow
/// entry (when there is an allow list) and no deny entry. Publish decisions are cached per subject
/// so the publish path pays one span-keyed lookup.
/// </summary>
internal sealed class ClientPermissions
{
    /// <summary>Cached publish decisions before the cache is cleared (nats-server: maxPermCacheSize 128).</summary>
    private const int MaxCachedDecisions = 1024;

    private readonly SubjectPermission? _publish;
    private readonly SubjectPermission? _subscribe;
    private readonly Dictionary<byte[], bool> _publishCache = new(SubjectBytesComparer.Instance);
    private readonly Dictionary<byte[], bool>.AlternateLookup<ReadOnlySpan<byte>> _publishLookup;
    private readonly ConcurrentDictionary<byte[], bool>? _denyCache;
    private readonly ConcurrentDictionary<byte[], bool>.AlternateLookup<ReadOnlySpan<byte>> _denyLookup;
    private readonly ResponsePermission? _responses;
    private readonly Lock _repliesLock = new();
    private readonly Dictionary<byte[], ReplyAllowance>? _replies;
    private readonly Dictionary<byte[], ReplyAllowance>.AlternateLookup<ReadOnlySpan<byte>> _repliesLookup;

    /// <summary>Reply subjects tracked before expired and used-up ones are pruned (nats-server's replyPermLimit).</summary>
    private const int MaxTrackedReplies = 4096;

    public ClientPermissions(Permissions permissions)
    {
        _publish = permissions.Publish;
        _subscribe = permissions.Subscribe;
        _publishLookup = _publishCache.GetAlternateLookup<ReadOnlySpan<byte>>();
        if (permissions.Responses is { } responses)
        {
            _responses = responses;
            _replies = new Dictionary<byte[], ReplyAllowance>(SubjectBytesComparer.Instance);
            _repliesLookup = _replies.GetAlternateLookup<ReadOnlySpan<byte>>();
        }

        if (_subscribe?.Deny is { Count: > 0 })
        {
            _denyCache = new ConcurrentDictionary<byte[], bool>(SubjectBytesComparer.Instance);
            _denyLookup = _denyCache.GetAlternateLookup<ReadOnlySpan<byte>>();
        }
    }

    /// <summary>True with <c>allow_responses</c>: deliveries with a reply subject must be noted (<see cref="TrackReply"/>).</summary>
    public bool TracksReplies => _replies is not null;

    /// <summary>
    /// Notes that the client received a message with reply subject <paramref name="reply"/>: it may now
    /// publish there (nats-server's client.replies). Called by publishers' threads.
    /// </summary>
    public void TrackReply(ReadOnlySpan<byte> reply)
    {
        lock (_repliesLock)
        {
            if (_replies!.Count >= MaxTrackedReplies)
            {
                PruneReplies();
            }

            _repliesLookup[reply] = new ReplyAllowance(Environment.TickCount64);
        }
    }

    // A response to a noted reply subject: allowed while under max and before it expires.
    private bool TakeResponse(ReadOnlySpan<byte> subject)
    {
        var responses = _responses!;
        lock (_repliesLock)
        {
            if (!_repliesLookup.TryGetValue(subject, out var allowance))
            {
                return false;
            }

            allowance.Count++;
            var expires = responses.ExpiresAfter;
            if ((responses.MaxMessages > 0 && allowance.Count > responses.MaxMessages) ||
                (expires > TimeSpan.Zero && Environment.TickCount64 - allowance.Tick > (long)expires.TotalMilliseconds))
            {
                _repliesLookup.Remove(subject);
                return false;
            }

            return true;
        }
    }

    private void PruneReplies()
    {
        var responses = _responses!;
        var now = Environment.TickCount64;
        List<byte[]>? stale = null;
        foreach (var (key, allowance) in _replies!)
        {
            if ((responses.MaxMessages > 0 && allowance.Count >= responses.MaxMessages) ||
                (responses.ExpiresAfter > TimeSpan.Zero && now - allowance.Tick > (long)responses.ExpiresAfter.TotalMilliseconds))
            {
                (stale ??= []).Add(key);
            }
        }

        foreach (var key in stale ?? [])
        {
            _replies.Remove(key);
        }
    }

    /// <summary>True when subscribe permissions deny some subjects: deliveries must be checked.</summary>
    public bool FiltersDeliveries => _denyCache is not null;

    /// <summary>
    /// Whether a message on <paramref name="subject"/> must not be delivered to this client: a
    /// subscription wider than a deny entry is allowed, so the deny applies at delivery, as
    /// nats-server's checkDenySub. Called by any publisher's thread; the decision is cached.
    /// </summary>
    public bool DeniesDelivery(ReadOnlySpan<byte> subject)
    {
        if (_denyCache is null)
        {
            return false;
        }

        if (_denyLookup.TryGetValue(subject, out var denied))
        {
            return denied;
        }

        var text = Encoding.UTF8.GetString(subject);
        denied = false;
        foreach (var pattern in _subscribe!.Deny!)
        {
            if (SubjectRules.Matches(text, pattern))
            {
                denied = true;
                break;
            }
        }

        if (_denyCache.Count >= MaxCachedDecisions)
        {
            _denyCache.Clear();
        }

        _denyLookup.TryAdd(subject, denied);
        return denied;
    }

    /// <summary>Whether the client may publish to <paramref name="subject"/>. Called only by the client's read pump.</summary>
    public bool CanPublish(ReadOnlySpan<byte> subject)
    {
        if (_publish is null)
        {
            return true;
        }

        if (!_publishLookup.TryGetValue(subject, out var allowed))
        {
            allowed = IsAllowed(_publish, Encoding.UTF8.GetString(subject), wildcardSubject: false);
            if (_publishCache.Count >= MaxCachedDecisions)
            {
                _publishCache.Clear();
            }

            _publishLookup[subject] = allowed;
        }

        // Not allowed as such: maybe a response to a message this client received (allow_responses).
        return allowed || (_responses is not null && TakeResponse(subject));
    }

    /// <summary>Whether the client may subscribe to <paramref name="subject"/> (optionally in a queue group).</summary>
    public bool CanSubscribe(string subject) => _subscribe is null || IsAllowed(_subscribe, subject, SubjectRules.HasWildcard(Encoding.UTF8.GetBytes(subject)));

    private static bool IsAllowed(SubjectPermission permission, string subject, bool wildcardSubject)
    {
        if (permission.Allow is { } allow)
        {
            var any = false;
            foreach (var pattern in allow)
            {
                if (Covers(pattern, subject, wildcardSubject))
                {
                    any = true;
                    break;
                }
            }

            if (!any)
            {
                return false;
            }
        }

        if (permission.Deny is { } deny)
        {
            foreach (var pattern in deny)
            {
                // A deny entry blocks a subscription it covers; a wider wildcard subscription is
                // still allowed (nats-server filters the denied subjects at delivery).
                if (Covers(pattern, subject, wildcardSubject))
                {
                    return false;
                }
            }
        }

        return true;
    }

    private static bool Covers(string pattern, string subject, bool wildcardSubject) =>
        wildcardSubject ? SubjectRules.IsSubsetOf(subject, pattern) : SubjectRules.Matches(subject, pattern);

    /// <summary>A reply subject the client may answer: when it was noted, and responses sent so far.</summary>
    private sealed class ReplyAllowance(long tick)
    {
        public long Tick { get; } = tick;

        public int Count { get; set; }
    }
}

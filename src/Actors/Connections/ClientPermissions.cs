using System.Collections.Concurrent;
using System.Text;
using Courier.Actors.Routing;
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

    public ClientPermissions(Permissions permissions)
    {
        _publish = permissions.Publish;
        _subscribe = permissions.Subscribe;
        _publishLookup = _publishCache.GetAlternateLookup<ReadOnlySpan<byte>>();
        if (_subscribe?.Deny is { Count: > 0 })
        {
            _denyCache = new ConcurrentDictionary<byte[], bool>(SubjectBytesComparer.Instance);
            _denyLookup = _denyCache.GetAlternateLookup<ReadOnlySpan<byte>>();
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

        if (_publishLookup.TryGetValue(subject, out var allowed))
        {
            return allowed;
        }

        allowed = IsAllowed(_publish, Encoding.UTF8.GetString(subject), wildcardSubject: false);
        if (_publishCache.Count >= MaxCachedDecisions)
        {
            _publishCache.Clear();
        }

        _publishLookup[subject] = allowed;
        return allowed;
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
}

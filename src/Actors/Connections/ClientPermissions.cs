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

    public ClientPermissions(Permissions permissions)
    {
        _publish = permissions.Publish;
        _subscribe = permissions.Subscribe;
        _publishLookup = _publishCache.GetAlternateLookup<ReadOnlySpan<byte>>();
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

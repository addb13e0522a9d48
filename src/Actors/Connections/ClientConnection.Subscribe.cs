using System.Text;
using Courier.Actors.Accounts;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

internal sealed partial class ClientConnection
{
    private readonly Lock _subsLock = new();
    private readonly Dictionary<string, Subscription> _subs = new(StringComparer.Ordinal);
    private readonly List<SubChange> _pendingChanges = [];
    private Task? _activation;

    /// <summary>Subscriptions held, for monitoring.</summary>
    public int SubscriptionCount
    {
        get
        {
            lock (_subsLock)
            {
                return _subs.Count;
            }
        }
    }

    /// <summary>
    /// This client's subscriptions in one router shard of one account: what a restarted shard rebuilds from.
    /// </summary>
    public void CollectSubscriptions(Account account, int shard, List<Subscription> into)
    {
        lock (_subsLock)
        {
            foreach (var sub in _subs.Values)
            {
                if (sub.Shard == shard && ReferenceEquals(sub.Account, account))
                {
                    into.Add(sub);
                }

                foreach (var shadow in sub.Shadows ?? [])
                {
                    if (shadow.Shard == shard && ReferenceEquals(shadow.Account, account))
                    {
                        into.Add(shadow);
                    }
                }
            }
        }
    }

    /// <summary>A copy of all subscriptions, for monitoring.</summary>
    public Subscription[] SubscriptionsSnapshot()
    {
        lock (_subsLock)
        {
            return [.. _subs.Values];
        }
    }

    // SUB <subject> [queue group] <sid>\r\n
    private void ProcessSubscribe(ReadOnlySpan<byte> subjectBytes, ReadOnlySpan<byte> queueBytes, ReadOnlySpan<byte> sidBytes)
    {
        if (!SubjectRules.IsValidSubject(subjectBytes) || (!queueBytes.IsEmpty && !IsValidQueue(queueBytes)))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.InvalidSubject));
            return;
        }

        var subject = Encoding.UTF8.GetString(subjectBytes);
        var queue = queueBytes.IsEmpty ? null : Encoding.UTF8.GetString(queueBytes);
        if (_permissions is not null && !_permissions.CanSubscribe(subject))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.SubscribeViolation(subject, queue)));
            return;
        }

        var sub = new Subscription(this, _account, subject, queue, sidBytes.ToArray(), _account.Space.ShardForSubscription(subjectBytes));
        if (!TryAddSubscription(sub))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.MaxSubscriptionsExceeded));
            return;
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }
    }

    /// <summary>
    /// Adds a subscription to the table and this batch's changes (with its shadows in the accounts it
    /// imports from). False over max_subscriptions; a repeated sid keeps the first subscription, as nats-server.
    /// </summary>
    private bool TryAddSubscription(Subscription sub)
    {
        var max = _broker.Options.MaxSubscriptions;
        lock (_subsLock)
        {
            if (_subs.ContainsKey(sub.SidKey))
            {
                return true;
            }

            if (max > 0 && _subs.Count >= max)
            {
                return false;
            }

            _subs.Add(sub.SidKey, sub);
        }

        _pendingChanges.Add(new SubChange(sub, Add: true));
        if (_account.StreamImports.Count > 0)
        {
            AddShadows(sub);
        }

        return true;
    }

    // UNSUB <sid> [max_msgs]\r\n
    private void ProcessUnsubscribe(ReadOnlySpan<byte> sidBytes, long max)
    {
        var sidKey = Encoding.UTF8.GetString(sidBytes);
        Subscription? removed = null;
        lock (_subsLock)
        {
            if (_subs.TryGetValue(sidKey, out var sub))
            {
                if (max > 0 && max > sub.Delivered)
                {
                    sub.Max = max;
                }
                else
                {
                    _subs.Remove(sidKey);
                    removed = sub;
                }
            }
        }

        if (removed is not null)
        {
            _pendingChanges.Add(new SubChange(removed, Add: false));
            foreach (var shadow in removed.Shadows ?? [])
            {
                _pendingChanges.Add(new SubChange(shadow, Add: false));
            }
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }
    }

    /// <summary>
    /// Removes a subscription that reached its auto-unsubscribe limit. Called by whichever
    /// publisher delivered the last message, so it does not wait for the router.
    /// </summary>
    internal void RemoveAfterLastDelivery(Subscription sub)
    {
        lock (_subsLock)
        {
            if (!_subs.TryGetValue(sub.SidKey, out var current) || !ReferenceEquals(current, sub))
            {
                return;
            }

            _subs.Remove(sub.SidKey);
        }

        if (sub.Shadows is { } shadows)
        {
            var changes = new SubChange[shadows.Length + 1];
            changes[0] = new SubChange(sub, Add: false);
            for (var i = 0; i < shadows.Length; i++)
            {
                changes[i + 1] = new SubChange(shadows[i], Add: false);
            }

            _broker.Subscriptions.ApplyWithoutWaiting(changes);
            return;
        }

        _broker.Subscriptions.ApplyWithoutWaiting([new SubChange(sub, Add: false)]);
    }

    /// <summary>Makes the batch of SUB/UNSUB in effect in the routers, then returns (invariant 2).</summary>
    private async Task FlushSubscriptionChangesAsync()
    {
        if (_activation is { } activation)
        {
            // The account this CONNECT brought in is being activated (its JetStream): nothing else first.
            _activation = null;
            await activation.ConfigureAwait(false);
        }

        var changes = _pendingChanges.ToArray();
        _pendingChanges.Clear();
        await _broker.Subscriptions.ApplyAsync(changes).ConfigureAwait(false);
    }

    private Subscription[] RemoveAllSubscriptions()
    {
        Subscription[] all;
        lock (_subsLock)
        {
            all = [.. _subs.Values];
            _subs.Clear();
        }

        if (all.Length == 0)
        {
            return all;
        }

        var changes = new List<SubChange>(all.Length);
        foreach (var sub in all)
        {
            changes.Add(new SubChange(sub, Add: false));
            foreach (var shadow in sub.Shadows ?? [])
            {
                changes.Add(new SubChange(shadow, Add: false));
            }
        }

        _broker.Subscriptions.ApplyWithoutWaiting(changes);
        return all;
    }

    private static bool IsValidQueue(ReadOnlySpan<byte> queue)
    {
        foreach (var b in queue)
        {
            if (b is (byte)' ' or (byte)'\t' or (byte)'\r' or (byte)'\n')
            {
                return false;
            }
        }

        return true;
    }
}

/// <summary>One subscription added to or removed from the subject space.</summary>
internal readonly record struct SubChange(Subscription Sub, bool Add);

using Courier.Actors.Accounts;
using Courier.Actors.Routing;

namespace Courier.Actors.Connections;

internal abstract partial class Connection
{
    private protected readonly Lock _subsLock = new();
    private protected readonly Dictionary<string, Subscription> _subs = new(StringComparer.Ordinal);
    private protected readonly List<SubChange> _pendingChanges = [];
    private protected Task? _activation;

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

    /// <summary>
    /// Adds a subscription to the table and this batch's changes (with its shadows in the accounts it
    /// imports from). False over max_subscriptions; a repeated sid keeps the first subscription, as nats-server.
    /// </summary>
    private protected bool TryAddSubscription(Subscription sub)
    {
        var max = _node.Options.MaxSubscriptions;
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

    /// <summary>UNSUB: removes subscription <paramref name="sidKey"/> now, or after <paramref name="max"/> deliveries in all.</summary>
    private protected void RemoveSubscription(string sidKey, long max)
    {
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

            _node.Subscriptions.ApplyWithoutWaiting(changes);
            return;
        }

        _node.Subscriptions.ApplyWithoutWaiting([new SubChange(sub, Add: false)]);
    }

    /// <summary>Makes the SUB/UNSUB made since the last call in effect in the routers (invariant 2); done at once when there are none.</summary>
    internal Task ApplySubscriptionChangesAsync() => _pendingChanges.Count == 0 && _activation is null ? Task.CompletedTask : FlushSubscriptionChangesAsync();

    /// <summary>Makes the batch of SUB/UNSUB in effect in the routers, then returns (invariant 2).</summary>
    private protected async Task FlushSubscriptionChangesAsync()
    {
        if (_activation is { } activation)
        {
            // The account this CONNECT brought in is being activated (its JetStream): nothing else first.
            _activation = null;
            await activation.ConfigureAwait(false);
        }

        var changes = _pendingChanges.ToArray();
        _pendingChanges.Clear();
        await _node.Subscriptions.ApplyAsync(changes).ConfigureAwait(false);
    }

    /// <summary>
    /// Moves the connection into its account, once, at CONNECT. Subscriptions made before CONNECT
    /// (allowed without authorization) live in the global account, which is then also the client's.
    /// </summary>
    internal void BindAccount(Account account)
    {
        if (ReferenceEquals(account, _account))
        {
            return;
        }

        lock (_subsLock)
        {
            if (_subs.Count > 0 || _pendingChanges.Count > 0)
            {
                return;
            }
        }

        _account = account;
        Publisher.SwitchAccount(account);
    }

    /// <summary>
    /// Adds a subscription of the account's own connection (<see cref="Account.ImportClient"/>): a service
    /// import's subject, or the account's <c>_R_.</c> replies. Returns the change to apply.
    /// </summary>
    internal SubChange AddImportSubscription(string subject, ImportBinding binding)
    {
        var subjectBytes = System.Text.Encoding.UTF8.GetBytes(subject);
        var sid = System.Text.Encoding.UTF8.GetBytes($"{binding.Kind} {subject}");
        var sub = new Subscription(this, _account, subject, null, sid, _account.Space.ShardForSubscription(subjectBytes)) { Import = binding };
        lock (_subsLock)
        {
            _subs[sub.SidKey] = sub;
        }

        return new SubChange(sub, Add: true);
    }

    /// <summary>Gives a new subscription its shadows in the exporters of the streams its account imports.</summary>
    private void AddShadows(Subscription sub)
    {
        List<Subscription>? shadows = null;
        foreach (var import in _account.StreamImports)
        {
            if (import.ShadowFor(sub.Subject) is not { } shadow)
            {
                continue;
            }

            var exporter = import.Exporter;
            var subjectBytes = System.Text.Encoding.UTF8.GetBytes(shadow.Subject);
            (shadows ??= []).Add(new Subscription(this, exporter, shadow.Subject, sub.Queue, sub.Sid, exporter.Space.ShardForSubscription(subjectBytes))
            {
                Import = ImportBinding.Shadow(import, sub, shadow.Filter),
            });
        }

        if (shadows is null)
        {
            return;
        }

        sub.Shadows = [.. shadows];
        foreach (var shadow in shadows)
        {
            _pendingChanges.Add(new SubChange(shadow, Add: true));
        }
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

        _node.Subscriptions.ApplyWithoutWaiting(changes);
        return all;
    }

    private protected static bool IsValidQueue(ReadOnlySpan<byte> queue)
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

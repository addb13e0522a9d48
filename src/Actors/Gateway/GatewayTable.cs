using System.Text;
using System.Text.Json;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;

namespace Courier.Actors.Gateway;

/// <summary>
/// The node's gateway links and the interest told over the inbound ones: every subscription of every
/// account but those of gateway links themselves (the remote clusters' interest), by account and subject
/// (and queue), so an inbound link that registers is told all of it and each later change once.
/// One lock guards it all.
/// </summary>
/// <remarks>
/// Interest-only mode, as nats-server 2.9 uses for every account: before the first RS+ of an account an
/// inbound link gets <c>INFO {"gateway_cmd":2}</c> for the account, then all of its RS+, then
/// <c>INFO {"gateway_cmd":3}</c>; from then on each RS+/RS-. The remote's outbound link sends a message
/// only where an RS+ matches (nats-server's gatewayInterest with gateway_iom). Not on the message path:
/// called where SUB/UNSUB batches are applied and by links during their handshake. Writes only into link
/// outbounds, never does I/O.
/// </remarks>
internal sealed class GatewayTable(string gatewayName, string serverId)
{
    private readonly Lock _lock = new();
    private readonly List<GatewayConnection> _inbound = [];
    private readonly List<GatewayConnection> _outbound = [];
    private readonly Dictionary<Account, Dictionary<string, Interest>> _interest = [];
    private byte[] _scratch = new byte[1024];
    private GatewayConnection[] _outboundSnapshot = [];
    private GatewayConnection[] _inboundSnapshot = [];

    /// <summary>This cluster's gateway name.</summary>
    public string Name { get; } = gatewayName;

    /// <summary>nats-server's hash of this cluster's gateway name (a mapped reply carrying it is for this cluster).</summary>
    public byte[] ClusterHash { get; } = Encoding.ASCII.GetBytes(GatewayReply.Hash(gatewayName));

    /// <summary>This server's reply prefix, <c>_GR_.&lt;cluster hash&gt;.&lt;server hash&gt;.</c></summary>
    public byte[] ReplyPrefix { get; } = GatewayReply.PrefixFor(gatewayName, serverId);

    /// <summary>The gateway port listened on (set once the listener is up; 0 without one).</summary>
    public int ListenPort { get; set; }

    /// <summary>The registered outbound links now (the publish path reads it for mapped replies).</summary>
    public GatewayConnection[] Outbound => Volatile.Read(ref _outboundSnapshot);

    /// <summary>The registered inbound links now (for monitoring).</summary>
    public GatewayConnection[] Inbound => Volatile.Read(ref _inboundSnapshot);

    /// <summary>The accounts an inbound link has switched to interest-only mode (for monitoring), by name.</summary>
    public List<string> SwitchedAccounts(GatewayConnection link)
    {
        lock (_lock)
        {
            var names = new List<string>(link.Switched.Count);
            foreach (var account in link.Switched)
            {
                names.Add(account.Name);
            }

            names.Sort(StringComparer.Ordinal);
            return names;
        }
    }

    /// <summary>Registers an outbound link once its handshake is done: it may send messages. False when one to that gateway is registered already.</summary>
    public bool RegisterOutbound(GatewayConnection link)
    {
        lock (_lock)
        {
            foreach (var other in _outbound)
            {
                if (other.Link.Name == link.Link.Name)
                {
                    return false;
                }
            }

            link.Link.Registered = true;
            _outbound.Add(link);
            Volatile.Write(ref _outboundSnapshot, [.. _outbound]);
            return true;
        }
    }

    /// <summary>Whether an outbound link to <paramref name="name"/> is registered.</summary>
    public bool HasOutbound(string name)
    {
        foreach (var link in Outbound)
        {
            if (link.Link.Name == name)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Registers an inbound link and switches every account with interest to interest-only mode on it:
    /// the start command, all RS+ (queue groups included), the complete command.
    /// </summary>
    public void RegisterInbound(GatewayConnection link)
    {
        lock (_lock)
        {
            link.Switched.Clear();
            foreach (var account in _interest.Keys)
            {
                SwitchLocked(link, account);
            }

            link.Link.Registered = true;
            _inbound.Add(link);
            Volatile.Write(ref _inboundSnapshot, [.. _inbound]);
        }

        link.Outbound.Signal();
    }

    /// <summary>Removes a closing link (its own subscriptions go as any connection's do).</summary>
    public void Unregister(GatewayConnection link)
    {
        lock (_lock)
        {
            if (!link.Link.Registered)
            {
                return;
            }

            link.Link.Registered = false;
            if (_inbound.Remove(link))
            {
                Volatile.Write(ref _inboundSnapshot, [.. _inbound]);
            }

            if (_outbound.Remove(link))
            {
                Volatile.Write(ref _outboundSnapshot, [.. _outbound]);
            }
        }
    }

    /// <summary>
    /// Updates the interest told to the inbound links for a batch of subscription changes of any connection
    /// but a gateway link: RS+ when a subject's count goes from 0 (a queue group's at each change), RS- when it
    /// drops to 0; an account not yet switched on a link is switched first.
    /// </summary>
    public void OnChanges(IReadOnlyList<SubChange> changes)
    {
        lock (_lock)
        {
            var touched = false;
            foreach (var change in changes)
            {
                var sub = change.Sub;
                if (sub.Client is GatewayConnection)
                {
                    continue; // another cluster's interest is never told back to the clusters
                }

                if (change.Add ? !sub.MarkCountedForGateways() : !sub.UnmarkCountedForGateways())
                {
                    continue; // counted once, uncounted once
                }

                if (!_interest.TryGetValue(sub.Account, out var keys))
                {
                    if (!change.Add)
                    {
                        continue;
                    }

                    _interest[sub.Account] = keys = new Dictionary<string, Interest>(StringComparer.Ordinal);
                }

                var key = sub.Queue is null ? sub.Subject : $"{sub.Subject} {sub.Queue}";
                if (!keys.TryGetValue(key, out var interest))
                {
                    if (!change.Add)
                    {
                        continue;
                    }

                    interest = new Interest(sub.Subject, sub.Queue);
                    keys[key] = interest;
                }

                var before = interest.Count;
                interest.Count += change.Add ? 1 : -1;
                if (interest.Count <= 0)
                {
                    keys.Remove(key);
                }

                foreach (var link in _inbound)
                {
                    if (!link.Switched.Contains(sub.Account))
                    {
                        if (interest.Count > 0)
                        {
                            SwitchLocked(link, sub.Account); // tells this interest too
                            touched = true;
                        }

                        continue;
                    }

                    if (interest.Queue.Length > 0 || before == 0 || interest.Count <= 0)
                    {
                        Write(link, sub.Account.NameUtf8, interest, Math.Max(interest.Count, 0));
                        touched = true;
                    }
                }
            }

            if (touched)
            {
                foreach (var link in _inbound)
                {
                    link.Outbound.Signal();
                }
            }
        }
    }

    // INFO gateway_cmd 2, every RS+ of the account, INFO gateway_cmd 3 (caller holds _lock).
    private void SwitchLocked(GatewayConnection link, Account account)
    {
        link.Switched.Add(account);
        link.Outbound.Write(Command(GatewayCommands.AllSubsStart, account));
        if (_interest.TryGetValue(account, out var keys))
        {
            foreach (var interest in keys.Values)
            {
                Write(link, account.NameUtf8, interest, interest.Count);
            }
        }

        link.Outbound.Write(Command(GatewayCommands.AllSubsComplete, account));
    }

    // INFO {"server_id":"","gateway":"<name>","gateway_cmd":<cmd>,"gateway_cmd_payload":"<base64 account>"}
    private byte[] Command(byte command, Account account) => ProtocolWriter.Info(JsonSerializer.SerializeToUtf8Bytes(
        new GatewayInfo { Gateway = Name, Command = command, CommandPayload = account.NameUtf8 },
        NatsJsonContext.Default.GatewayInfo));

    // RS+ <account> <subject>[ <queue> <weight>]\r\n  or  RS- <account> <subject>[ <queue>]\r\n   (caller holds _lock)
    private void Write(GatewayConnection link, byte[] account, Interest interest, int count)
    {
        var needed = account.Length + interest.Subject.Length + interest.Queue.Length + 32;
        if (_scratch.Length < needed)
        {
            _scratch = new byte[needed * 2];
        }

        var n = count > 0
            ? RouteWriter.WriteSub(_scratch, account, interest.Subject, interest.Queue, count)
            : RouteWriter.WriteUnsub(_scratch, account, interest.Subject, interest.Queue);
        link.Outbound.Write(_scratch.AsSpan(0, n));
    }

    /// <summary>The subscriptions on one subject (and queue) in one account.</summary>
    private sealed class Interest(string subject, string? queue)
    {
        public byte[] Subject { get; } = Encoding.UTF8.GetBytes(subject);

        public byte[] Queue { get; } = queue is null ? [] : Encoding.UTF8.GetBytes(queue);

        public int Count { get; set; }
    }
}

using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Monitoring;

internal sealed partial class MonitoringPages
{
    /// <summary>/connz page size when none is asked for (nats-server DefaultConnListSize).</summary>
    private const int DefaultConnzLimit = 1024;

    private const string GlobalAccount = "$G";

    /// <summary>
    /// /connz as nats-server 2.9.10's <c>Server.Connz</c>, for a query whose <see cref="ConnzQuery.Refusal"/> is null.
    /// </summary>
    /// <remarks>
    /// Its quirks are kept, since tooling reads them: <c>total</c> counts the open connections (of
    /// <c>acc</c>) and the closed ones before <c>user</c>, <c>mqtt_client</c> and <c>cid</c> narrow the list;
    /// <c>cid</c> makes the limit 1 and looks among the closed connections alone when the state is
    /// closed or any; <c>user</c> is the CONNECT user, with or without <c>auth</c>; a closed connection
    /// of the global account matches no <c>acc</c> filter, <c>$G</c> included; an unknown account
    /// answers an empty page with no server id and <c>connections</c> null.
    /// </remarks>
    public Connz Connz(ConnzQuery query)
    {
        var now = DateTime.UtcNow;
        var offset = Math.Max(0, query.Offset);
        var limit = query.Cid > 0 ? 1 : query.Limit > 0 ? query.Limit : DefaultConnzLimit;
        var account = query.Account ?? "";
        var user = query.User ?? "";
        var mqttClient = query.MqttClient ?? "";
        if (account.Length > 0 && !_broker.Monitoring.AccountExists(account))
        {
            return new Connz { Now = now, Offset = offset, Limit = limit, Connections = null };
        }

        var wantOpen = query.State != ConnzState.Closed;
        var wantClosed = query.State != ConnzState.Open;
        var open = wantOpen ? _broker.Monitoring.GetConnections(open: true, closed: false, account: account.Length > 0 ? account : null) : [];
        var closed = wantClosed ? _broker.Monitoring.GetConnections(open: false, closed: true) : [];
        if (account.Length > 0)
        {
            // A closed connection keeps its account's name only when it is not the global account.
            closed = [.. closed.Where(c => c.Account != GlobalAccount && c.Account == account)];
        }

        var total = open.Count + closed.Count;
        var rows = new List<ConnectionInfo>();
        if (query.Cid > 0)
        {
            if (wantClosed)
            {
                closed = [.. closed.Where(c => c.Cid == query.Cid).Take(1)];
            }
            else if (_broker.Monitoring.GetConnection(query.Cid) is { } one)
            {
                rows.Add(one);
            }
        }
        else
        {
            rows.AddRange(open.Where(c => Selected(c, user, mqttClient)));
        }

        rows.AddRange(closed.Where(c => Selected(c, user, mqttClient)));
        Sort(rows, query.Sort, now);

        var from = (int)Math.Min(offset, rows.Count);
        var to = (int)Math.Min((long)offset + limit, rows.Count);
        var page = new List<ConnzConnection>(to - from);
        for (var i = from; i < to; i++)
        {
            page.Add(Row(rows[i], query, now));
        }

        return new Connz
        {
            ServerId = _broker.ServerId,
            Now = now,
            NumConnections = page.Count,
            Total = total,
            Offset = offset,
            Limit = limit,
            Connections = page,
        };
    }

    private static bool Selected(ConnectionInfo c, string user, string mqttClient) =>
        (user.Length == 0 || (c.Username ?? "") == user) && (mqttClient.Length == 0 || (c.MqttClient ?? "") == mqttClient);

    // nats-server's sort options: by cid (and start) ascending, uptime and reason ascending, the rest
    // largest first. Ties keep cid order (Go's sort is not stable, so nats-server's order of ties is arbitrary).
    private static void Sort(List<ConnectionInfo> rows, ConnzSort sort, DateTime now)
    {
        Comparison<ConnectionInfo> compare = sort switch
        {
            ConnzSort.Subs => (a, b) => b.Subscriptions.Count.CompareTo(a.Subscriptions.Count),
            ConnzSort.Pending => (a, b) => b.PendingBytes.CompareTo(a.PendingBytes),
            ConnzSort.MsgsTo => (a, b) => b.OutMsgs.CompareTo(a.OutMsgs),
            ConnzSort.MsgsFrom => (a, b) => b.InMsgs.CompareTo(a.InMsgs),
            ConnzSort.BytesTo => (a, b) => b.OutBytes.CompareTo(a.OutBytes),
            ConnzSort.BytesFrom => (a, b) => b.InBytes.CompareTo(a.InBytes),
            ConnzSort.Last => (a, b) => b.LastActivity.CompareTo(a.LastActivity),
            // nats-server's "idle" compares last activity minus start, not the time since the last activity.
            ConnzSort.Idle => (a, b) => (b.LastActivity - b.Start).CompareTo(a.LastActivity - a.Start),
            ConnzSort.Uptime => (a, b) => ((a.Stop ?? now) - a.Start).CompareTo((b.Stop ?? now) - b.Start),
            ConnzSort.Stop => (a, b) => (b.Stop ?? default).CompareTo(a.Stop ?? default),
            ConnzSort.Reason => (a, b) => string.CompareOrdinal(a.Reason ?? "", b.Reason ?? ""),
            _ => (_, _) => 0,
        };
        rows.Sort((a, b) => compare(a, b) is var c && c != 0 ? c : a.Cid.CompareTo(b.Cid));
    }

    private static ConnzConnection Row(ConnectionInfo c, ConnzQuery query, DateTime now)
    {
        var closed = c.Stop is not null;
        var subs = c.Subscriptions.Count == 0 ? null : c.Subscriptions;
        return new ConnzConnection
        {
            Cid = c.Cid,
            Type = c.Type,
            Ip = c.Ip,
            Port = c.Port,
            Start = c.Start,
            LastActivity = c.LastActivity,
            Uptime = GoDuration.FormatUptime((c.Stop ?? now) - c.Start),
            Idle = GoDuration.FormatUptime((c.Stop ?? now) - c.LastActivity),
            Rtt = c.Rtt > TimeSpan.Zero ? GoDuration.Format(c.Rtt.Ticks * 100) : null,
            PendingBytes = c.PendingBytes,
            InMsgs = c.InMsgs,
            OutMsgs = c.OutMsgs,
            InBytes = c.InBytes,
            OutBytes = c.OutBytes,
            Subscriptions = c.Subscriptions.Count,
            Name = c.Name,
            Lang = c.Lang,
            Version = c.Version,
            AuthorizedUser = query.Auth ? c.AuthorizedUser : null,
            Account = query.Auth && c.Account != GlobalAccount ? c.Account : null,
            TlsVersion = c.TlsVersion,
            TlsCipherSuite = c.TlsCipherSuite,
            SubscriptionsList = subs is not null && query.Subscriptions && !query.SubscriptionsDetail ? [.. subs.Select(s => s.Subject)] : null,
            // An open connection's details carry no account; a closed one's were taken with it, as nats-server's.
            SubscriptionsListDetail = subs is not null && query.SubscriptionsDetail ? [.. subs.Select(s => SubszDetail.From(s, withAccount: closed))] : null,
            Stop = c.Stop,
            Reason = c.Reason,
            MqttClient = c.MqttClient,
        };
    }
}

namespace Courier.Gateway.Monitoring;

/// <summary>Which connections /connz lists (nats-server's ConnState: 0 open, 1 closed, 2 any).</summary>
internal enum ConnzState
{
    Open = 0,
    Closed = 1,
    Any = 2,
}

/// <summary>
/// /connz <c>sort</c> (nats-server 2.9.10's SortOpt). Only <see cref="Cid"/>, <see cref="Start"/>,
/// <see cref="Uptime"/> and <see cref="Reason"/> are ascending; the others put the largest first.
/// </summary>
internal enum ConnzSort
{
    Cid,
    Start,
    Subs,
    Pending,
    MsgsTo,
    MsgsFrom,
    BytesTo,
    BytesFrom,
    Last,
    Idle,
    Uptime,
    Stop,
    Reason,
}

/// <summary>A <c>/connz</c> request: from the HTTP query, or from a system-account request's JSON (nats-server's ConnzOptions).</summary>
internal sealed record ConnzQuery(
    ConnzSort Sort = ConnzSort.Cid,
    bool Subscriptions = false,
    bool SubscriptionsDetail = false,
    bool Auth = false,
    int Offset = 0,
    int Limit = 0,
    ulong Cid = 0,
    string? MqttClient = null,
    ConnzState State = ConnzState.Open,
    string? User = null,
    string? Account = null)
{
    /// <summary>
    /// Parses a <c>sort</c> value as nats-server's SortOpt: case-sensitive, empty is by cid, and
    /// an unknown one is nats-server's error text (2.9.10 has no <c>rtt</c> sort).
    /// </summary>
    public static bool TryParseSort(string text, out ConnzSort sort, out string error)
    {
        error = "";
        sort = text switch
        {
            "" or "cid" => ConnzSort.Cid,
            "start" => ConnzSort.Start,
            "subs" => ConnzSort.Subs,
            "pending" => ConnzSort.Pending,
            "msgs_to" => ConnzSort.MsgsTo,
            "msgs_from" => ConnzSort.MsgsFrom,
            "bytes_to" => ConnzSort.BytesTo,
            "bytes_from" => ConnzSort.BytesFrom,
            "last" => ConnzSort.Last,
            "idle" => ConnzSort.Idle,
            "uptime" => ConnzSort.Uptime,
            "stop" => ConnzSort.Stop,
            "reason" => ConnzSort.Reason,
            _ => (ConnzSort)(-1),
        };
        if ((int)sort >= 0)
        {
            return true;
        }

        error = $"invalid sorting option: {text}";
        return false;
    }

    /// <summary>nats-server's error for a valid query it refuses: a sort by stop or reason needs <c>state=closed</c>.</summary>
    public string? Refusal() => Sort switch
    {
        ConnzSort.Stop when State != ConnzState.Closed => "sort by stop only valid on closed connections",
        ConnzSort.Reason when State != ConnzState.Closed => "sort by reason only valid on closed connections",
        _ => null,
    };
}

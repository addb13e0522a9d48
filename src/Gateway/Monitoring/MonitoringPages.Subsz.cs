using Courier.Protocols.Subjects;

namespace Courier.Gateway.Monitoring;

/// <summary>A <c>/subsz</c> request (nats-server's SubszOptions).</summary>
internal sealed record SubszQuery(bool Subscriptions = false, int Offset = 0, int Limit = 0, string? Account = null, string? Test = null)
{
    /// <summary>
    /// nats-server's error for a <c>test</c> subject that is not a literal subject (its IsValidLiteralSubject:
    /// no empty token, no <c>*</c> or <c>&gt;</c> token); null when the query is fine.
    /// </summary>
    public string? Refusal()
    {
        if (string.IsNullOrEmpty(Test) || (!Test.Split('.').Any(t => t.Length == 0) && !SubjectRules.HasWildcard(Test.AsSpan())))
        {
            return null;
        }

        return $"invalid test subject, must be valid publish subject: {Test}";
    }
}

internal sealed partial class MonitoringPages
{
    /// <summary>/subsz page size when none is asked for (nats-server DefaultSubListSize).</summary>
    internal const int DefaultSubszLimit = 1024;

    /// <summary>
    /// /subsz as nats-server 2.9.10's <c>Server.Subsz</c>, for a query whose <see cref="SubszQuery.Refusal"/> is null:
    /// the counts of every account (or of <c>acc</c>), and with <c>subs</c> the subscriptions of local
    /// clients and services (not routes') that a message on <c>test</c> would reach, paged.
    /// </summary>
    /// <remarks>
    /// As nats-server, <c>total</c> is the length of the page returned, not of the whole list.
    /// </remarks>
    public Subsz Subsz(SubszQuery query)
    {
        var offset = Math.Max(0, query.Offset);
        var limit = query.Limit > 0 ? query.Limit : DefaultSubszLimit;
        var account = string.IsNullOrEmpty(query.Account) ? null : query.Account;
        IReadOnlyList<SubszDetail>? page = null;
        if (query.Subscriptions)
        {
            var test = string.IsNullOrEmpty(query.Test) ? null : query.Test;
            var matching = _broker.Monitoring.GetSubscriptions(account)
                .Where(s => test is null || SubjectRules.Matches(test.AsSpan(), s.Subject.AsSpan()))
                .ToList();
            var from = (int)Math.Min(offset, matching.Count);
            var to = (int)Math.Min((long)offset + limit, matching.Count);
            page = [.. matching.Skip(from).Take(to - from).Select(s => SubszDetail.From(s, withAccount: true))];
        }

        return new Subsz
        {
            ServerId = _broker.ServerId,
            Now = DateTime.UtcNow,
            NumSubscriptions = account is null ? _broker.Monitoring.SubscriptionCount : _broker.Monitoring.SubscriptionCountOf(account),
            Total = page?.Count ?? 0,
            Offset = offset,
            Limit = limit,
            Subscriptions = page,
        };
    }
}

using Courier.Actors.Accounts;
using Courier.Actors.Events;

namespace Courier.Gateway.Monitoring;

/// <summary>/accstatz and the <c>data</c> of <c>$SYS.REQ.ACCOUNT.*.STATZ</c>, as nats-server 2.9.10's AccountStatz.</summary>
internal sealed partial class MonitoringPages
{
    /// <summary>
    /// Each account's connections and traffic on this server: every account (by name) when
    /// <paramref name="accounts"/> is empty, else those named that exist, in the order named (nats-server's
    /// AccountStatzOptions.Accounts). An account without a local client connection is left out unless
    /// <paramref name="includeUnused"/> (leaf links alone do not make it used, as in nats-server).
    /// </summary>
    public AccountStatz AccountStatz(IReadOnlyList<string>? accounts, bool includeUnused)
    {
        var list = new List<AccountStat>();
        if (accounts is not { Count: > 0 })
        {
            foreach (var account in _broker.Accounts.All)
            {
                Add(account);
            }

            list.Sort((a, b) => string.CompareOrdinal(a.Account, b.Account));
        }
        else
        {
            foreach (var name in accounts)
            {
                if (_broker.Accounts.Find(name) is { } account)
                {
                    Add(account);
                }
            }
        }

        return new AccountStatz { ServerId = _broker.ServerId, Now = DateTime.UtcNow, Accounts = list };

        void Add(Account account)
        {
            var tally = AccountTally.Of(_broker.Clients, account);
            if (tally.Connections == 0 && !includeUnused)
            {
                return;
            }

            list.Add(new AccountStat
            {
                Account = account.Name,
                Connections = tally.Connections,
                LeafNodes = tally.LeafNodes,
                TotalConnections = tally.Connections + tally.LeafNodes,
                Sent = new StatszData { Msgs = tally.OutMsgs, Bytes = tally.OutBytes },
                Received = new StatszData { Msgs = tally.InMsgs, Bytes = tally.InBytes },
            });
        }
    }
}

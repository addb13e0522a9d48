namespace Courier.Actors.Server;

/// <summary>A config reload's part in the broker: the authorization options.</summary>
public sealed partial class Broker
{
    /// <summary>Guards the authorization options against a reload while a CONNECT is checked.</summary>
    private readonly Lock _authLock = new();

    /// <summary>
    /// Replaces the user, password, token, users and default permissions with <paramref name="next"/>'s
    /// (the INFO's <c>auth_required</c> follows), then re-checks every connected client: the ones no
    /// longer authorized are closed, the others get their new permissions.
    /// </summary>
    public void ReloadAuthorization(ServerOptions next)
    {
        ArgumentNullException.ThrowIfNull(next);
        lock (_authLock)
        {
            Options.Username = next.Username;
            Options.Password = next.Password;
            Options.Token = next.Token;
            Options.DefaultPermissions = next.DefaultPermissions;
            Options.Users.Clear();
            Options.Users.AddRange(next.Users);
            Options.NkeyUsers.Clear();
            Options.NkeyUsers.AddRange(next.NkeyUsers);
            Options.NoAuthUser = next.NoAuthUser;
            _info.AuthRequired = Options.AuthRequired && Options.NoAuthUser is null;
            _infoJson = null; // formatted again on the next INFO
            _webSocketInfoJson = null;
        }

        foreach (var client in Clients)
        {
            client.ReapplyAuthorization();
        }
    }
}

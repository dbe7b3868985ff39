//! `catalog-admin orgs`: organisations and their members (docs/organisations.md). Operators
//! keep every power over every organisation: they create organisations, and add, change and
//! remove members whatever their role.

use catalog::orgs::{display_name, Membership, Org, OrgError, OrgName, OrgStoreError, Role};
use catalog::ports::OrgStore;
use catalog_aws::dynamo::orgs::DynamoOrgs;
use clap::Subcommand;

use super::accounts::{self, Account};
use super::{operator, Aws, CliError, Context};

/// Organisations: create them, and manage their members and roles (`member`, `editor`,
/// `admin`). Accounts are named by email or account id.
///
/// Example: catalog-admin orgs create acme --admin alice@example.com --display-name "Acme Labs"
#[derive(Subcommand)]
pub enum Command {
    /// A new organisation, with its first admin. Its datasets are published as `NAME~slug`.
    ///
    /// Example: catalog-admin orgs create acme --admin alice@example.com
    Create {
        /// 2 to 32 lowercase letters, digits and hyphens.
        name: String,
        /// The first admin's email or account id.
        #[arg(long)]
        admin: String,
        /// How the site titles it (default: the name).
        #[arg(long)]
        display_name: Option<String>,
    },
    /// Changes an organisation's display name (its settings).
    ///
    /// Example: catalog-admin orgs rename acme --display-name "Acme Labs"
    Rename {
        name: String,
        #[arg(long)]
        display_name: String,
    },
    /// Every organisation: name, members, display name.
    ///
    /// Example: catalog-admin orgs list
    List,
    /// An organisation's members: email, account id, role.
    ///
    /// Example: catalog-admin orgs members acme
    Members { name: String },
    /// Adds an account to an organisation (role default `member`).
    ///
    /// Example: catalog-admin orgs add acme bob@example.com --role editor
    Add {
        name: String,
        account: String,
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// Changes a member's role (an organisation keeps at least one admin).
    ///
    /// Example: catalog-admin orgs role acme bob@example.com admin
    Role {
        name: String,
        account: String,
        role: String,
    },
    /// Removes a member (an organisation keeps at least one admin). Their keys stay theirs;
    /// from the next request they read nothing of the organisation's that a stranger could
    /// not (docs/organisations.md).
    ///
    /// Example: catalog-admin orgs remove acme bob@example.com
    Remove { name: String, account: String },
}

fn org_name(raw: &str) -> Result<OrgName, CliError> {
    OrgName::parse(raw).map_err(|e| CliError::Usage(format!("invalid organisation '{raw}': {e}")))
}

fn role(raw: &str) -> Result<Role, CliError> {
    Role::parse(raw).ok_or_else(|| CliError::Usage(OrgError::Role(raw.to_owned()).to_string()))
}

impl From<OrgStoreError> for CliError {
    fn from(e: OrgStoreError) -> Self {
        match e {
            OrgStoreError::Refused(refusal) => CliError::Usage(refusal.to_string()),
            OrgStoreError::Store(e) => CliError::Store(e),
        }
    }
}

/// An account the pool still holds (a membership is made for a person who can sign in).
async fn in_pool(aws: &Aws, who: &str) -> Result<Account, CliError> {
    let account = accounts::find(aws, who).await?;
    if account.email().is_none() {
        return Err(CliError::Usage(format!(
            "the account {} is no longer in the user pool (deleted): it cannot join an organisation",
            account.sub
        )));
    }
    Ok(account)
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let orgs = DynamoOrgs::new(aws.dynamo.clone(), &aws.config.keys_table);
    let now = ctx.now;
    match command {
        Command::Create {
            name,
            admin,
            display_name: shown,
        } => {
            let name = org_name(&name)?;
            let shown = display_name(shown.as_deref().unwrap_or(name.as_str()))
                .map_err(|e| CliError::Usage(e.to_string()))?;
            let admin = in_pool(&aws, &admin).await?;
            let org = Org {
                name: name.clone(),
                display_name: shown,
                members: 1,
                created_at: now,
                created_by: operator(),
            };
            let first = Membership {
                org: name.clone(),
                account: admin.sub.to_string(),
                role: Role::Admin,
                email: admin.email().map(str::to_owned),
                added_at: now,
                added_by: operator(),
            };
            orgs.create_org(&org, &first).await?;
            println!(
                "created {name}, with {} ({}) as its admin",
                admin.name, admin.sub
            );
        }
        Command::Rename {
            name,
            display_name: shown,
        } => {
            let name = org_name(&name)?;
            let shown = display_name(&shown).map_err(|e| CliError::Usage(e.to_string()))?;
            let org = orgs.set_display_name(&name, &shown).await?;
            println!("{name} is now titled {}", org.display_name);
        }
        Command::List => {
            let all = orgs.orgs().await?;
            if all.is_empty() {
                println!("no organisations");
            }
            for org in all {
                println!(
                    "{}\t{} members\t{}",
                    org.name, org.members, org.display_name
                );
            }
        }
        Command::Members { name } => {
            let name = org_name(&name)?;
            if orgs.org(&name).await?.is_none() {
                return Err(CliError::Usage(
                    OrgError::NotFound(name.to_string()).to_string(),
                ));
            }
            for m in orgs.members(&name).await? {
                println!(
                    "{}\t{}\t{}",
                    m.email.as_deref().unwrap_or("-"),
                    m.account,
                    m.role.as_str()
                );
            }
        }
        Command::Add {
            name,
            account,
            role: raw,
        } => {
            let name = org_name(&name)?;
            let role = role(&raw)?;
            let account = in_pool(&aws, &account).await?;
            let membership = Membership {
                org: name.clone(),
                account: account.sub.to_string(),
                role,
                email: account.email().map(str::to_owned),
                added_at: now,
                added_by: operator(),
            };
            orgs.add_member(&membership).await?;
            println!(
                "added {} ({}) to {name} as {}",
                account.name,
                account.sub,
                role.as_str()
            );
        }
        Command::Role {
            name,
            account,
            role: raw,
        } => {
            let name = org_name(&name)?;
            let role = role(&raw)?;
            let account = accounts::find(&aws, &account).await?;
            orgs.set_role(&name, &account.sub, role).await?;
            println!("{} is now {} of {name}", account.name, role.as_str());
        }
        Command::Remove { name, account } => {
            let name = org_name(&name)?;
            let account = accounts::find(&aws, &account).await?;
            let was = orgs.remove_member(&name, &account.sub).await?;
            println!(
                "removed {} ({}, {}) from {name}",
                account.name,
                account.sub,
                was.role.as_str()
            );
        }
    }
    Ok(())
}
